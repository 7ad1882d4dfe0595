package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/net/http/httpguts"
)

// RefusalListener returns l with the answers that net/http writes by itself, before any handler
// runs, rewritten to carry the Error body {code, message} (application/json, Connection: close),
// with the status net/http chose and a message saying what was wrong. srv is the server that
// will serve the returned listener: RefusalListener sets its ConnState (calling the hook already
// set, if any) and reads its MaxHeaderBytes and, for TLS, its TLSConfig; call it once srv is
// configured, before Serve or ServeTLS.
//
// The answers rewritten, net/http's as of Go 1.26 (conn.serve in net/http/server.go):
//   - 400 for a request it cannot parse: a malformed request line, method, version or request
//     target, a malformed header line, more than one Host, a bad Content-Length, a request cut
//     before the end of its header fields; the message names the part and the rule when the
//     connection's first request is the one refused (its head is kept, at most headKeep bytes,
//     until the first answer), else it says the request line or a header field is malformed;
//   - 400 for a missing or malformed Host, an invalid header name or value;
//   - 431 for a request line and header fields over MaxHeaderBytes;
//   - 501 for a Transfer-Encoding other than chunked;
//   - 505 for an HTTP version other than 1.0 and 1.1;
//   - 417 for an Expect header other than 100-continue (an empty answer, written by net/http's
//     response writer before any handler);
//   - on a TLS port, 400 for a request in plain HTTP (written on the connection under TLS).
//
// An answer is recognised by its exact form, and only when it is the first write on the
// connection since the previous answer ended (net/http's StateIdle) or since the connection
// opened: nothing a handler writes, on an answer in progress or a hijacked connection, is
// touched. Limitation: over TLS, the answers net/http writes inside TLS (all but the last above)
// are encrypted below this listener and keep net/http's text/plain form.
func RefusalListener(l net.Listener, srv *http.Server) net.Listener {
	rl := &refusalListener{Listener: l, tls: srv.TLSConfig != nil, maxHeaderBytes: srv.MaxHeaderBytes,
		next: srv.ConnState}
	if rl.maxHeaderBytes <= 0 {
		rl.maxHeaderBytes = http.DefaultMaxHeaderBytes
	}
	srv.ConnState = rl.connState
	return rl
}

// headKeep is how many bytes of a connection's first request RefusalListener keeps to explain
// net/http's bare 400.
const headKeep = 4 << 10

type refusalListener struct {
	net.Listener
	tls            bool
	maxHeaderBytes int
	next           func(net.Conn, http.ConnState)
}

func (l *refusalListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &refusalConn{Conn: c, l: l, keepHead: !l.tls}, nil
}

// connState ends an answer at StateIdle (the next write starts the next one) and makes a
// hijacked connection's writes pass untouched.
func (l *refusalListener) connState(nc net.Conn, state http.ConnState) {
	if c, ok := nc.(*refusalConn); ok {
		switch state {
		case http.StateIdle:
			c.answering.Store(false)
		case http.StateHijacked:
			c.answering.Store(true) // and no StateIdle will clear it
		}
	}
	if l.next != nil {
		l.next(nc, state)
	}
}

// refusalConn is one accepted connection (under TLS when the server serves TLS).
type refusalConn struct {
	net.Conn
	l *refusalListener
	// answering is set by the first write of an answer and cleared when net/http sets the
	// connection idle: an answer net/http writes before any handler is always such a first write.
	answering atomic.Bool
	// answered is set by the connection's first write; until then (when keepHead) Read keeps the
	// bytes read in head, the start of the first request. Only Read touches head, except a
	// rewrite of the first answer, which runs when no read is in progress.
	answered atomic.Bool
	keepHead bool
	head     []byte
}

func (c *refusalConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if c.keepHead {
		if !c.answered.Load() {
			if room := headKeep - len(c.head); room > 0 && n > 0 {
				c.head = append(c.head, p[:min(n, room)]...)
			}
		} else {
			c.keepHead, c.head = false, nil
		}
	}
	return n, err
}

func (c *refusalConn) Write(p []byte) (int, error) {
	if c.answering.Load() {
		return c.Conn.Write(p)
	}
	c.answering.Store(true)
	first := !c.answered.Swap(true)
	if c.l.tls {
		// Under TLS the only answer written on this connection in the clear is the one for
		// plain HTTP; every later write is TLS records (answering stays set: ConnState is called
		// with the *tls.Conn, never with this connection).
		if first && string(p) == plainHTTPOnTLSAnswer {
			return c.writeInstead(p, refusalAnswer("HTTP/1.0", http.StatusBadRequest,
				"request: this port serves HTTPS; send the request with TLS (https://)"))
		}
		return c.Conn.Write(p)
	}
	if answer := c.rewrite(p, first); answer != nil {
		return c.writeInstead(p, answer)
	}
	return c.Conn.Write(p)
}

// writeInstead writes answer in place of p, reporting p written.
func (c *refusalConn) writeInstead(p, answer []byte) (int, error) {
	if _, err := c.Conn.Write(answer); err != nil {
		return 0, err
	}
	return len(p), nil
}

// NetConn returns the connection under c (LimitConnections finds its own there).
func (c *refusalConn) NetConn() net.Conn { return c.Conn }

// CloseWrite half-closes the connection as net/http does after a 431 (it looks for the
// method on the connection it serves).
func (c *refusalConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// ReadFrom keeps the underlying connection's copy path (sendfile, splice) for bodies a handler
// copies from a file; it runs inside an answer, after its header.
func (c *refusalConn) ReadFrom(r io.Reader) (int64, error) {
	c.answering.Store(true)
	c.answered.Store(true)
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// The forms of net/http's answers (net/http/server.go, conn.serve and response.sendExpectationFailed).
const (
	plainTextHeaders     = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
	plainHTTPOnTLSAnswer = "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n"
)

// rewrite returns the answer to write in place of p when p is one of net/http's own answers,
// else nil. first says p is the connection's first write (c.head holds the request's start).
func (c *refusalConn) rewrite(p []byte, first bool) []byte {
	// Every answer's first write passes here: a 2xx or 3xx leaves at the first byte of its status.
	if len(p) < len("HTTP/1.1 400 \r\n") || p[len("HTTP/1.1 ")] != '4' && p[len("HTTP/1.1 ")] != '5' ||
		!bytes.HasPrefix(p, []byte("HTTP/1.")) {
		return nil
	}
	line, rest, ok := bytes.Cut(p, []byte("\r\n"))
	if !ok || len(line) < len("HTTP/1.1 400 ") || line[len("HTTP/1.1")] != ' ' || line[len("HTTP/1.1 000")] != ' ' {
		return nil
	}
	status, err := strconv.Atoi(string(line[len("HTTP/1.1 "):len("HTTP/1.1 000")]))
	if err != nil || status < 400 || status > 599 {
		return nil
	}
	proto := string(line[:len("HTTP/1.1")])
	if status == http.StatusExpectationFailed && isExpectationFailed(rest) {
		return refusalAnswer(proto, status, "Expect header: only 100-continue is supported")
	}
	// net/http's text/plain answers: "HTTP/1.1 <code> <text>[: <reason>]", the two headers, and
	// the status line again as the body ("Unsupported transfer encoding" for the 501).
	body, ok := bytes.CutPrefix(p[len(line):], []byte(plainTextHeaders))
	if proto != "HTTP/1.1" || !ok || string(body) != string(line[len("HTTP/1.1 "):]) &&
		!(status == http.StatusNotImplemented && string(body) == "Unsupported transfer encoding") {
		return nil
	}
	reason := ""
	if _, after, found := strings.Cut(string(line[len("HTTP/1.1 000 "):]), ": "); found {
		reason = after
	}
	var head []byte
	if first {
		head = c.head
	}
	return refusalAnswer(proto, status, refusalMessage(status, reason, head, c.l.maxHeaderBytes))
}

// isExpectationFailed reports whether rest (after the status line) is the header of net/http's
// empty 417 answer: Connection: close, a Date and Content-Length: 0, and nothing after.
func isExpectationFailed(rest []byte) bool {
	header, ok := bytes.CutSuffix(rest, []byte("\r\n\r\n"))
	lines := bytes.Split(header, []byte("\r\n"))
	return ok && len(lines) == 3 && string(lines[0]) == "Connection: close" &&
		bytes.HasPrefix(lines[1], []byte("Date: ")) && string(lines[2]) == "Content-Length: 0"
}

// refusalMessage says why net/http refused a request with status, from the reason on its status
// line and, for a bare 400, the request's start when known.
func refusalMessage(status int, reason string, head []byte, maxHeaderBytes int) string {
	switch status {
	case http.StatusRequestHeaderFieldsTooLarge:
		return fmt.Sprintf("request line and header fields: together larger than the limit of %d bytes", maxHeaderBytes)
	case http.StatusNotImplemented:
		return "Transfer-Encoding header: only chunked is implemented, given once"
	case http.StatusHTTPVersionNotSupported:
		return "request line: the HTTP version must be HTTP/1.0 or HTTP/1.1"
	}
	switch reason {
	case "missing required Host header":
		return "Host header: is required in an HTTP/1.1 request"
	case "malformed Host header":
		return "Host header: must be a host name or address with an optional port"
	case "invalid header name":
		return "header field name: must be a token (letters, digits and !#$%&'*+-.^_`|~)"
	case "invalid header value":
		return "header field value: must not hold control characters other than tab"
	case "":
		if message := explainMalformedHead(head); message != "" {
			return message
		}
		return "request: the request line or a header field is malformed"
	}
	// A reason a later net/http may add: its own words (never the request's bytes).
	return "request: " + reason
}

// explainMalformedHead says what net/http's parser refuses in head, the start of a request
// (at most headKeep bytes of it), or "" when it cannot tell.
func explainMalformedHead(head []byte) string {
	if len(head) == 0 {
		return ""
	}
	_, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head)))
	if err == nil {
		return ""
	}
	msg := err.Error()
	var urlErr *url.Error
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		if len(head) >= headKeep {
			return "" // the parser stopped where the kept bytes end, not where the request did
		}
		return "request: ended before the empty line that ends the header fields"
	case strings.HasPrefix(msg, "malformed HTTP request "):
		return "request line: must be a method, a request target and an HTTP version, separated by single spaces"
	case strings.HasPrefix(msg, "invalid method "):
		return "request line: the method must be a token (letters, digits and !#$%&'*+-.^_`|~)"
	case strings.HasPrefix(msg, "malformed HTTP version "):
		if version, err := strconv.Unquote(strings.TrimPrefix(msg, "malformed HTTP version ")); err == nil &&
			strings.ContainsAny(version, " \t") {
			// "GET  / HTTP/1.1": the parser cut at the first two spaces.
			return "request line: must be a method, a request target and an HTTP version, separated by single spaces"
		}
		return "request line: the HTTP version is malformed; HTTP/1.1 is expected"
	case errors.As(err, &urlErr):
		return "request line: the request target must be a path starting with / or an absolute URI, without spaces or control characters"
	case strings.HasPrefix(msg, "malformed MIME header initial line"):
		return "header fields: the first header line must not start with a space or tab"
	case strings.HasPrefix(msg, "malformed MIME header"):
		return explainHeaderLine(msg)
	case msg == "message too large":
		return "header fields: more fields than the server reads"
	case msg == "too many Host headers":
		return "Host header: must be given once"
	case strings.HasPrefix(msg, "bad trailer key "):
		return "Trailer header: must not name Content-Length, Transfer-Encoding or Trailer"
	case strings.Contains(msg, "Content-Length"):
		return "Content-Length header: must be one non-negative integer (repeated only with the same value)"
	}
	return ""
}

// explainHeaderLine explains textproto's "malformed MIME header[ line]: missing colon: "..."" from
// the line it quotes: no colon, a name that is not a token, or a value with a control character
// (naming the field, whose name is then a token).
func explainHeaderLine(msg string) string {
	i := strings.IndexByte(msg, '"')
	line, err := strconv.Unquote(msg[max(i, 0):])
	if i < 0 || err != nil {
		return "header fields: a line is not a field name, a colon and a value"
	}
	name, _, found := strings.Cut(line, ":")
	switch {
	case !found:
		return "header fields: a line has no colon; each must be a field name, a colon and a value"
	case !httpguts.ValidHeaderFieldName(name):
		return "header field name: must be a token (letters, digits and !#$%&'*+-.^_`|~), with no space before the colon"
	}
	if len(name) > 64 {
		name = name[:64] + "..."
	}
	return "header " + name + ": the value must not hold control characters other than tab"
}

// refusalBody is the API's Error body.
type refusalBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// refusalAnswer is a whole answer with the Error body, closing the connection.
func refusalAnswer(proto string, status int, message string) []byte {
	body, _ := json.Marshal(refusalBody{Code: status, Message: message})
	return fmt.Appendf(nil, "%s %d %s\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s",
		proto, status, http.StatusText(status), len(body), body)
}
