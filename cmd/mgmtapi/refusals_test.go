package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestRequestsRefusedByNetHTTPGetTheErrorBody: the server's listener gives the requests net/http
// refuses before any handler the Error body (internal/server's tests cover each case; this one
// checks mgmtapi serves through it, with its 1 MiB header limit).
func TestRequestsRefusedByNetHTTPGetTheErrorBody(t *testing.T) {
	p := start(t, nil, "--data-dir", t.TempDir())
	for _, c := range []struct {
		request string
		status  int
		message string
	}{
		{"GET\r\n\r\n", 400, "request line: must be a method, a request target and an HTTP version, separated by single spaces"},
		{"GET /healthz HTTP/1.1\r\n\r\n", 400, "Host header: is required in an HTTP/1.1 request"},
		{"GET /healthz HTTP/1.1\r\nHost: a\r\nX-Big: " + strings.Repeat("a", 2<<20) + "\r\n\r\n", 431,
			"request line and header fields: together larger than the limit of 1048576 bytes"},
	} {
		conn, err := net.Dial("tcp", p.addr)
		if err != nil {
			t.Fatal(err)
		}
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second)) // only against a hang
		go func() { _, _ = io.WriteString(conn, c.request) }()
		res, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%.40q: %v", c.request, err)
		}
		var body struct {
			Code    int
			Message string
		}
		err = json.NewDecoder(res.Body).Decode(&body)
		conn.Close()
		if err != nil || res.StatusCode != c.status || body.Code != c.status || body.Message != c.message ||
			res.Header.Get("Content-Type") != "application/json; charset=utf-8" || !res.Close {
			t.Errorf("%.40q: %d %q %+v (%v); want %d with the Error body %q and Connection: close",
				c.request, res.StatusCode, res.Header.Get("Content-Type"), body, err, c.status, c.message)
		}
	}
}
