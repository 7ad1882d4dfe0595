package delivery

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/textproto"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
)

// SMTPServer is the server EMAIL deliveries are sent through (--smtp-url, --smtp-from). It is the
// operator's own choice, so the outbound Policy (which guards the URLs users give) does not apply
// to it.
type SMTPServer struct {
	// Host and Port are where to connect; Host is also the name the server's certificate must
	// carry.
	Host string
	Port int
	// ImplicitTLS speaks TLS from the first byte (smtps://, port 465). Otherwise STARTTLS is used
	// whenever the server offers it, and a server that does not offer it is refused unless
	// RequireSTARTTLS is false.
	ImplicitTLS     bool
	RequireSTARTTLS bool
	// Username and Password, when Username is set, authenticate with AUTH PLAIN (over TLS, or to
	// a loopback server). Password is a secret: never logged nor quoted.
	Username, Password string
	// From is the address of the From header and of MAIL FROM.
	From string
	// RootCAs verifies the server's certificate; nil means the system's roots.
	RootCAs *x509.CertPool
}

// Email is the EMAIL connector type: one message per delivery, through Options.SMTP.
const Email ConnectorType = "EMAIL"

// ErrNoSMTPServer is the outcome of an EMAIL delivery when the server has no SMTP server.
var ErrNoSMTPServer = errors.New("email: no SMTP server is configured (--smtp-url)")

// email is an EMAIL record's message, as its fields hold it: to (a JSON array of addresses),
// subject and text.
type email struct {
	to            []string
	subject, text string
}

// emailOf reads and checks an EMAIL record's fields.
func emailOf(r record) (email, error) {
	var f struct {
		To      []string `json:"to"`
		Subject any      `json:"subject"`
		Text    any      `json:"text"`
	}
	if len(r.Payload) > 0 {
		if err := json.Unmarshal(r.Payload, &f); err != nil {
			return email{}, fmt.Errorf("delivery fields.to: must be an array of addresses")
		}
	}
	to, err := connectortypes.ParseRecipients(f.To)
	if err != nil {
		return email{}, fmt.Errorf("delivery fields.to: %w", err)
	}
	subject, ok1 := f.Subject.(string)
	text, ok2 := f.Text.(string)
	if (f.Subject != nil && !ok1) || (f.Text != nil && !ok2) {
		return email{}, errors.New("delivery fields.subject and fields.text: must be strings")
	}
	return email{to: to, subject: subject, text: text}, nil
}

// maxSubject bounds the subject (bytes, whole runes), so that the header stays within SMTP's line
// limit once encoded.
const maxSubject = 250

// headerText makes s one line of header text: control characters (CR and LF among them) become
// spaces, runs of spaces one, and it is cut to n bytes.
func headerText(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	return connectortypes.CutBytes(strings.Join(strings.Fields(s), " "), n)
}

// messageID is the Message-ID of a record: derived from its team and idempotency key, so every
// attempt of one notification carries the same one.
func messageID(r record, from string) string {
	sum := sha256.Sum256([]byte(strconv.FormatInt(r.TeamID, 10) + "\x00" + r.IdempotencyKey))
	domain := from[strings.LastIndex(from, "@")+1:]
	if domain == "" || strings.ContainsFunc(domain, func(c rune) bool {
		return !(c == '.' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9')
	}) {
		domain = "mgmtapi.invalid"
	}
	return "<" + hex.EncodeToString(sum[:16]) + ".mgmtapi@" + domain + ">"
}

// composeEmail is the message text of m from the server's From address: From, To, Subject
// (RFC 2047 Q-encoded when it is not ASCII, folded between encoded words), Date, Message-ID,
// MIME-Version, Auto-Submitted, a UTF-8 plain text body in quoted-printable. No header value
// holds a line break of the rendered fields.
func composeEmail(r record, m email, from string, now time.Time) []byte {
	var b bytes.Buffer
	to := make([]string, len(m.to))
	for i, a := range m.to {
		to[i] = (&mail.Address{Address: a}).String()
	}
	subject := headerText(m.subject, maxSubject)
	if subject == "" {
		subject = "(no subject)"
	}
	subject = strings.ReplaceAll(mime.QEncoding.Encode("utf-8", subject), "?= =?", "?=\r\n =?")
	fmt.Fprintf(&b, "From: %s\r\n", (&mail.Address{Address: from}).String())
	fmt.Fprintf(&b, "To: %s\r\n", strings.Join(to, ",\r\n "))
	fmt.Fprintf(&b, "Subject: %s\r\n", subject)
	fmt.Fprintf(&b, "Date: %s\r\n", now.Format(time.RFC1123Z))
	fmt.Fprintf(&b, "Message-ID: %s\r\n", messageID(r, from))
	b.WriteString("MIME-Version: 1.0\r\n")
	b.WriteString("Content-Type: text/plain; charset=utf-8\r\n")
	b.WriteString("Content-Transfer-Encoding: quoted-printable\r\n")
	b.WriteString("Auto-Submitted: auto-generated\r\n")
	if r.Test {
		b.WriteString(TestHeader + ": true\r\n")
	}
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	_, _ = qp.Write([]byte(strings.ToValidUTF8(m.text, "?")))
	_ = qp.Close()
	b.WriteString("\r\n")
	return b.Bytes()
}

// sendEmail makes one attempt at the EMAIL record r through server, within ctx. The outcome's
// status is the SMTP server's last reply code; a 4xx reply and a network error (the timeout
// included) are retried, a 5xx reply fails at once (naming the recipient a RCPT refusal is
// about), as do a missing server, a server that offers no STARTTLS where it is required and a
// refused login.
func sendEmail(ctx context.Context, server *SMTPServer, r record, timeout time.Duration) outcome {
	if server == nil {
		return outcome{err: ErrNoSMTPServer.Error()}
	}
	m, err := emailOf(r)
	if err != nil {
		return outcome{err: err.Error()}
	}
	addr := net.JoinHostPort(server.Host, strconv.Itoa(server.Port))
	fail := func(step string, err error) outcome {
		var reply *textproto.Error
		if errors.As(err, &reply) {
			o := outcome{status: reply.Code, retry: reply.Code >= 400 && reply.Code < 500,
				err: fmt.Sprintf("SMTP server %s answered %s with %d %s", addr, step, reply.Code, snippet([]byte(reply.Msg)))}
			return o
		}
		if ctx.Err() != nil {
			return outcome{retry: true, err: fmt.Sprintf("SMTP server %s did not answer within %s", addr, timeout)}
		}
		var certErr *tls.CertificateVerificationError
		if errors.As(err, &certErr) {
			return outcome{err: fmt.Sprintf("SMTP server %s (%s): %s", addr, step, snippet([]byte(err.Error())))}
		}
		return outcome{retry: true, err: fmt.Sprintf("SMTP server %s (%s): %s", addr, step, snippet([]byte(err.Error())))}
	}
	tlsConfig := &tls.Config{ServerName: server.Host, RootCAs: server.RootCAs, MinVersion: tls.VersionTLS12}
	dialer := &net.Dialer{}
	conn, err := dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fail("connect", err)
	}
	defer conn.Close()
	// the attempt's deadline bounds every read and write of the session
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if server.ImplicitTLS {
		tc := tls.Client(conn, tlsConfig)
		if err := tc.HandshakeContext(ctx); err != nil {
			return fail("TLS handshake", err)
		}
		conn = tc
	}
	c, err := smtp.NewClient(conn, server.Host)
	if err != nil {
		return fail("greeting", err)
	}
	defer c.Close()
	if err := c.Hello(helloName(server.From)); err != nil {
		return fail("EHLO", err)
	}
	if !server.ImplicitTLS {
		if ok, _ := c.Extension("STARTTLS"); ok {
			if err := c.StartTLS(tlsConfig); err != nil {
				return fail("STARTTLS", err)
			}
		} else if server.RequireSTARTTLS {
			return outcome{err: fmt.Sprintf("SMTP server %s does not offer STARTTLS, which --smtp-url requires for a server that is not on loopback", addr)}
		}
	}
	if server.Username != "" {
		if err := c.Auth(smtp.PlainAuth("", server.Username, server.Password, server.Host)); err != nil {
			o := fail("AUTH", err)
			o.retry = o.retry && o.status != 0 // a refused login or an unencrypted connection is the operator's to fix
			return o
		}
	}
	if err := c.Mail(server.From); err != nil {
		return fail("MAIL FROM", err)
	}
	for _, to := range m.to {
		if err := c.Rcpt(to); err != nil {
			return fail("RCPT TO "+to, err)
		}
	}
	w, err := c.Data()
	if err != nil {
		return fail("DATA", err)
	}
	if _, err := w.Write(composeEmail(r, m, server.From, time.Now())); err != nil {
		return fail("DATA", err)
	}
	if err := w.Close(); err != nil {
		return fail("the message", err)
	}
	// the message is accepted: a failing QUIT changes nothing
	_ = c.Quit()
	return outcome{status: 250}
}

// helloName is the name mgmtapi greets the server with: the From address's domain.
func helloName(from string) string {
	domain := from[strings.LastIndex(from, "@")+1:]
	if domain == "" || strings.ContainsAny(domain, " \t\r\n[]") {
		return "localhost"
	}
	return domain
}
