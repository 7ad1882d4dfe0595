package server

import (
	"bufio"
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// refusalTestMaxHeaderBytes is the test server's MaxHeaderBytes (net/http reads 4096 more).
const refusalTestMaxHeaderBytes = 4096

// cannedLookalike is net/http's bare 400 as it writes it on the connection.
const cannedLookalike = "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request"

// startRefusalServer serves New's handler through RefusalListener, over TLS when tlsConfig is
// set. Its API answers /mgmt/v1/lookalike with a text/plain 400 that reads like net/http's own,
// and /mgmt/v1/lookalike-body with net/http's whole bare 400 as the body of a 200.
func startRefusalServer(t *testing.T, tlsConfig *tls.Config) string {
	t.Helper()
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/mgmt/v1/lookalike":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("Connection", "close")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, "400 Bad Request")
		case "/mgmt/v1/lookalike-body":
			w.Header().Set("Content-Length", strconv.Itoa(len(cannedLookalike)))
			w.WriteHeader(http.StatusOK)
			_ = http.NewResponseController(w).Flush()
			_, _ = io.WriteString(w, cannedLookalike)
		default:
			writeErrorBody(w, http.StatusNotFound, "no such operation")
		}
	})
	srv := &http.Server{Handler: testHandler(api, Options{}), TLSConfig: tlsConfig,
		MaxHeaderBytes: refusalTestMaxHeaderBytes, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: log.New(io.Discard, "", 0)}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	rl := RefusalListener(l, srv)
	go func() {
		if tlsConfig != nil {
			_ = srv.ServeTLS(rl, "", "")
			return
		}
		_ = srv.Serve(rl)
	}()
	t.Cleanup(func() { _ = srv.Close() })
	return l.Addr().String()
}

// rawAnswer is one answer read off a raw connection.
type rawAnswer struct {
	res  *http.Response
	body []byte
	// closed says the server closed the connection after the answer.
	closed bool
}

// exchangeRaw writes request on a new connection (half-closing it after when halfClose) and
// reads the answers: count of them, then whether the connection is closed. The deadline only
// keeps a broken server from hanging the test.
func exchangeRaw(t *testing.T, addr, request string, halfClose bool, count int) []rawAnswer {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.WriteString(conn, request); err != nil {
		t.Fatalf("write: %v", err)
	}
	if halfClose {
		_ = conn.(*net.TCPConn).CloseWrite()
	}
	r := bufio.NewReader(conn)
	var answers []rawAnswer
	for range count {
		res, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatalf("%q: reading answer %d: %v", short(request), len(answers)+1, err)
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			t.Fatalf("%q: reading body of answer %d: %v", short(request), len(answers)+1, err)
		}
		answers = append(answers, rawAnswer{res: res, body: body})
	}
	_, err = r.ReadByte()
	answers[len(answers)-1].closed = errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)
	return answers
}

func short(s string) string {
	if len(s) > 100 {
		return s[:100] + "..."
	}
	return s
}

// checkRefusal checks that a is the Error body with status and a message holding want, in
// application/json, with Connection: close, on a connection then closed.
func checkRefusal(t *testing.T, request string, a rawAnswer, status int, want string) {
	t.Helper()
	var body errorBody
	err := json.Unmarshal(a.body, &body)
	if a.res.StatusCode != status || err != nil || body.Code != status || !strings.Contains(body.Message, want) ||
		a.res.Header.Get("Content-Type") != "application/json; charset=utf-8" || !a.res.Close || !a.closed {
		t.Errorf("%q: answer %d Content-Type %q Connection %q %s (closed after: %v);\nwant %d application/json, Connection: close, a message holding %q, and the connection closed",
			short(request), a.res.StatusCode, a.res.Header.Get("Content-Type"), a.res.Header.Get("Connection"), a.body, a.closed, status, want)
	}
}

// refusalCases are requests net/http refuses before any handler, each with the answer's status and
// what its message holds.
var refusalCases = []struct {
	name, request string
	halfClose     bool
	status        int
	message       string
}{
	{"request line without target and version", "GET\r\n\r\n", false, 400,
		"request line: must be a method, a request target and an HTTP version, separated by single spaces"},
	{"two spaces in the request line", "GET  /healthz HTTP/1.1\r\nHost: a\r\n\r\n", false, 400, "request line: must be a method"},
	{"method not a token", "G(T /healthz HTTP/1.1\r\nHost: a\r\n\r\n", false, 400, "request line: the method must be a token"},
	{"malformed version", "GET /healthz HTTP/1.x\r\nHost: a\r\n\r\n", false, 400, "request line: the HTTP version is malformed"},
	{"not HTTP", "GET /healthz FOO/1.1\r\nHost: a\r\n\r\n", false, 400, "request line: the HTTP version is malformed"},
	{"HTTP/2.0 request line", "GET /healthz HTTP/2.0\r\nHost: a\r\n\r\n", false, 505,
		"request line: the HTTP version must be HTTP/1.0 or HTTP/1.1"},
	{"HTTP/0.9", "GET /healthz HTTP/0.9\r\n\r\n", false, 505, "HTTP/1.0 or HTTP/1.1"},
	{"target not a path", "GET healthz HTTP/1.1\r\nHost: a\r\n\r\n", false, 400, "request line: the request target must be a path"},
	{"control character in the target", "GET /health\x01z HTTP/1.1\r\nHost: a\r\n\r\n", false, 400, "request line: the request target"},
	{"no Host", "GET /healthz HTTP/1.1\r\n\r\n", false, 400, "Host header: is required in an HTTP/1.1 request"},
	{"two Hosts", "GET /healthz HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", false, 400, "Host header: must be given once"},
	{"malformed Host", "GET /healthz HTTP/1.1\r\nHost: a b\r\n\r\n", false, 400, "Host header: must be a host name"},
	{"header name not a token", "GET /healthz HTTP/1.1\r\nHost: a\r\nBad Name: x\r\n\r\n", false, 400,
		"header field name: must be a token"},
	{"header name with a slash", "GET /healthz HTTP/1.1\r\nHost: a\r\nX/Y: x\r\n\r\n", false, 400, "header field name: must be a token"},
	{"control character in a value", "GET /healthz HTTP/1.1\r\nHost: a\r\nX-Thing: a\x01b\r\n\r\n", false, 400,
		"header X-Thing: the value must not hold control characters"},
	{"header line without colon", "GET /healthz HTTP/1.1\r\nHost: a\r\nnocolon\r\n\r\n", false, 400, "a line has no colon"},
	{"first header line folded", "GET /healthz HTTP/1.1\r\n Host: a\r\n\r\n", false, 400,
		"header fields: the first header line must not start with a space or tab"},
	{"two Content-Lengths", "POST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", false, 400,
		"Content-Length header: must be one non-negative integer"},
	{"Content-Length not a number", "POST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: x\r\n\r\n", false, 400, "Content-Length header"},
	{"negative Content-Length", "POST /healthz HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", false, 400, "Content-Length header"},
	{"forbidden trailer", "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTrailer: Content-Length\r\n\r\n0\r\n\r\n", false, 400,
		"Trailer header: must not name"},
	{"request cut before the end of its header", "GET /healthz HTTP/1.1\r\nHost: a\r\n", true, 400,
		"request: ended before the empty line that ends the header fields"},
	{"transfer coding gzip", "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", false, 501,
		"Transfer-Encoding header: only chunked is implemented"},
	{"chunked twice", "POST /healthz HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", false, 501,
		"Transfer-Encoding header"},
	{"header fields over the limit", "GET /healthz HTTP/1.1\r\nHost: a\r\nX-Big: " + strings.Repeat("a", 3*refusalTestMaxHeaderBytes) + "\r\n\r\n",
		false, 431, "request line and header fields: together larger than the limit of 4096 bytes"},
	{"expectation other than 100-continue", "GET /healthz HTTP/1.1\r\nHost: a\r\nExpect: something\r\n\r\n", false, 417,
		"Expect header: only 100-continue is supported"},
}

// TestRefusalsCarryTheErrorBody sends each kind of request net/http refuses before any handler,
// as raw bytes, and checks the answer is the Error body with net/http's status and a message
// saying what is wrong.
func TestRefusalsCarryTheErrorBody(t *testing.T) {
	addr := startRefusalServer(t, nil)
	for _, c := range refusalCases {
		t.Run(c.name, func(t *testing.T) {
			answers := exchangeRaw(t, addr, c.request, c.halfClose, 1)
			checkRefusal(t, c.request, answers[0], c.status, c.message)
		})
	}
}

// TestRefusalAfterAnAnswerOnTheSameConnection: a request refused after another was answered on a
// keep-alive connection gets the Error body too; its head was not kept, so the message is the
// general one.
func TestRefusalAfterAnAnswerOnTheSameConnection(t *testing.T) {
	addr := startRefusalServer(t, nil)
	request := "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\nGET\r\n\r\n"
	answers := exchangeRaw(t, addr, request, false, 2)
	if answers[0].res.StatusCode != http.StatusOK || string(answers[0].body) != `{"status":"ok"}` {
		t.Fatalf("first answer %d %s, want 200 {\"status\":\"ok\"}", answers[0].res.StatusCode, answers[0].body)
	}
	checkRefusal(t, request, answers[1], 400, "request: the request line or a header field is malformed")

	// A 417 after an answer, through net/http's response writer, is the Error body as well.
	request = "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\nGET /healthz HTTP/1.1\r\nHost: a\r\nExpect: x\r\n\r\n"
	answers = exchangeRaw(t, addr, request, false, 2)
	checkRefusal(t, request, answers[1], 417, "Expect header")
}

// TestHandlerAnswersAreUntouched: text/plain answers of handlers (/metrics, and a 400 written to
// look like net/http's own) and a body holding net/http's bare 400 reach the client as written.
func TestHandlerAnswersAreUntouched(t *testing.T) {
	addr := startRefusalServer(t, nil)

	// The last request of each connection asks for Connection: close, so that the server ends it.
	request := "GET /metrics HTTP/1.1\r\nHost: a\r\n\r\nGET /metrics HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
	a := exchangeRaw(t, addr, request, false, 2)[1]
	if a.res.StatusCode != http.StatusOK || !strings.HasPrefix(a.res.Header.Get("Content-Type"), "text/plain") ||
		!strings.Contains(string(a.body), "# HELP") {
		t.Errorf("/metrics: %d %q %.200s; want 200 text/plain metrics", a.res.StatusCode, a.res.Header.Get("Content-Type"), a.body)
	}

	request = "GET /mgmt/v1/lookalike HTTP/1.1\r\nHost: a\r\n\r\n"
	a = exchangeRaw(t, addr, request, false, 1)[0]
	if a.res.StatusCode != http.StatusBadRequest || a.res.Header.Get("Content-Type") != "text/plain; charset=utf-8" ||
		string(a.body) != "400 Bad Request" {
		t.Errorf("handler's text/plain 400: %d %q %q; want it as the handler wrote it", a.res.StatusCode, a.res.Header.Get("Content-Type"), a.body)
	}

	request = "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\nGET /mgmt/v1/lookalike-body HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n"
	a = exchangeRaw(t, addr, request, false, 2)[1]
	if a.res.StatusCode != http.StatusOK || string(a.body) != cannedLookalike {
		t.Errorf("handler's body holding net/http's 400: %d %q; want 200 with the body as written", a.res.StatusCode, a.body)
	}
}

// TestPlainHTTPOnTheTLSPort: a plain HTTP request on the TLS port gets the Error body (net/http
// writes its answer under TLS, on the accepted connection), and TLS requests are served.
func TestPlainHTTPOnTheTLSPort(t *testing.T) {
	cert := selfSignedCertificate(t)
	addr := startRefusalServer(t, &tls.Config{Certificates: []tls.Certificate{cert}})

	request := "GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"
	a := exchangeRaw(t, addr, request, false, 1)[0]
	if a.res.Proto != "HTTP/1.0" {
		t.Errorf("proto %s, want HTTP/1.0 as net/http answers", a.res.Proto)
	}
	checkRefusal(t, request, a, 400, "request: this port serves HTTPS; send the request with TLS (https://)")

	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	defer client.CloseIdleConnections()
	for range 2 {
		res, err := client.Get("https://" + addr + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || string(body) != `{"status":"ok"}` {
			t.Fatalf("GET https://…/healthz: %d %s", res.StatusCode, body)
		}
	}
}

// TestRefusalListenerKeepsTheConnStateHook: a ConnState hook set before RefusalListener still
// sees every state.
func TestRefusalListenerKeepsTheConnStateHook(t *testing.T) {
	states := make(chan http.ConnState, 10)
	srv := &http.Server{Handler: http.NotFoundHandler(), ConnState: func(_ net.Conn, s http.ConnState) { states <- s }}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = srv.Serve(RefusalListener(l, srv)) }()
	defer srv.Close()
	exchangeRaw(t, l.Addr().String(), "GET\r\n\r\n", false, 1)
	if s := <-states; s != http.StateNew {
		t.Fatalf("first state %v, want new", s)
	}
	if s := <-states; s != http.StateActive {
		t.Fatalf("second state %v, want active", s)
	}
}

func selfSignedCertificate(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	template := &x509.Certificate{SerialNumber: big.NewInt(1), DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// FuzzRawRequest sends raw bytes (seeds: refusalCases, a good request, pipelined ones) on a
// connection to New's handler served through RefusalListener, half-closes it and reads every
// answer. The property: every answer of 400 or more is the Error body in application/json, and
// the only 5xx are net/http's 501 and 505 (the API here answers 404 with the Error body to every
// request it gets). Run longer with
//
//	go test ./internal/server -run '^$' -fuzz FuzzRawRequest -fuzztime 60s
func FuzzRawRequest(f *testing.F) {
	for _, c := range refusalCases {
		f.Add([]byte(c.request))
	}
	f.Add([]byte("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\n"))
	f.Add([]byte("GET /healthz HTTP/1.1\r\nHost: a\r\n\r\nGET /metrics HTTP/1.0\r\n\r\nPOST /mgmt/v1/x HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\n{}G(T / HTTP/1.1\r\n\r\n"))
	f.Add([]byte("POST /mgmt/v1/x HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n2\r\n{}\r\n0\r\n\r\n"))
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeErrorBody(w, http.StatusNotFound, "no such operation")
	})
	srv := &http.Server{Handler: testHandler(api, Options{}), MaxHeaderBytes: refusalTestMaxHeaderBytes,
		ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	go func() { _ = srv.Serve(RefusalListener(l, srv)) }()
	f.Cleanup(func() { _ = srv.Close() })
	addr := l.Addr().String()

	f.Fuzz(func(t *testing.T, request []byte) {
		if bytes.Contains(request, []byte("HEAD")) {
			t.Skip("an answer to HEAD has no body: reading answers without their requests would misread it")
		}
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second)) // only against a hang
		go func() {
			_, _ = conn.Write(request)
			_ = conn.(*net.TCPConn).CloseWrite()
		}()
		r := bufio.NewReader(conn)
		for n := 1; ; n++ {
			if _, err := r.Peek(1); err != nil {
				return // the server closed the connection (or reset it after a 431)
			}
			res, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatalf("%q: answer %d unreadable: %v", short(string(request)), n, err)
			}
			body, err := io.ReadAll(res.Body)
			res.Body.Close()
			if err != nil {
				t.Fatalf("%q: answer %d cut: %v", short(string(request)), n, err)
			}
			var e errorBody
			switch {
			case res.StatusCode >= 500 && res.StatusCode != http.StatusNotImplemented && res.StatusCode != http.StatusHTTPVersionNotSupported:
				t.Fatalf("%q: answer %d is %d %s", short(string(request)), n, res.StatusCode, body)
			case res.StatusCode >= 400 && (res.Header.Get("Content-Type") != "application/json; charset=utf-8" ||
				json.Unmarshal(body, &e) != nil || e.Code != res.StatusCode || e.Message == ""):
				t.Fatalf("%q: answer %d is %d %q %q; want the Error body", short(string(request)), n, res.StatusCode, res.Header.Get("Content-Type"), body)
			}
		}
	})
}

// BenchmarkRefusalListener measures what RefusalListener adds to a request that net/http
// accepts: a bare handler served with and without it, over keep-alive connections (the normal
// path: an atomic load per read and write, a ConnState call) and one connection per request
// (which also copies the request's head once).
func BenchmarkRefusalListener(b *testing.B) {
	for _, wrapped := range []bool{false, true} {
		for _, keepAlive := range []bool{true, false} {
			name := fmt.Sprintf("refusal-listener=%v/keep-alive=%v", wrapped, keepAlive)
			b.Run(name, func(b *testing.B) {
				srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					w.Header().Set("Content-Type", "application/json; charset=utf-8")
					_, _ = io.WriteString(w, `{"status":"ok"}`)
				}), ErrorLog: log.New(io.Discard, "", 0)}
				l, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					b.Fatal(err)
				}
				served := l
				if wrapped {
					served = RefusalListener(l, srv)
				}
				go func() { _ = srv.Serve(served) }()
				defer srv.Close()
				request := "GET /healthz HTTP/1.1\r\nHost: a\r\nUser-Agent: bench\r\nAccept: application/json\r\n\r\n"
				if !keepAlive {
					request = "GET /healthz HTTP/1.1\r\nHost: a\r\nUser-Agent: bench\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
				}
				benchmarkRawRequests(b, l.Addr().String(), request, keepAlive)
			})
		}
	}
}

// benchmarkRawRequests sends request (a whole request head) to addr b.N times and reads each
// answer to its end: all over one keep-alive connection, or one connection per request.
func benchmarkRawRequests(b *testing.B, addr, request string, keepAlive bool) {
	b.Helper()
	var conn net.Conn
	var r *bufio.Reader
	defer func() {
		if conn != nil {
			conn.Close()
		}
	}()
	for b.Loop() {
		if conn == nil {
			var err error
			if conn, err = net.Dial("tcp", addr); err != nil {
				b.Fatal(err)
			}
			r = bufio.NewReader(conn)
		}
		if _, err := io.WriteString(conn, request); err != nil {
			b.Fatal(err)
		}
		res, err := http.ReadResponse(r, nil)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if !keepAlive {
			conn.Close()
			conn = nil
		}
	}
}
