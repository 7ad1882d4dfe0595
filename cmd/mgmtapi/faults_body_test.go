package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// e2mBatchExecutePath is the atomic E2M batch, whose requests array holds at most 100 items.
const e2mBatchExecutePath = "/mgmt/openapi/5/events2metrics/events2metrics/v2/all/execute"

// overBoundBatch is an E2M batch of about 15 MB: 250,000 deletes, far over the array's bound, so
// the server answers after reading a small part of it.
func overBoundBatch() []byte {
	item := `{"delete":{"id":"00000000-0000-4000-8000-000000000000"}}`
	var b bytes.Buffer
	b.WriteString(`{"requests":[`)
	b.WriteString(strings.Repeat(item+",", 250_000-1))
	b.WriteString(item + `]}`)
	return b.Bytes()
}

// TestFaultsOverBoundBody sends a 15 MB over-bound body to the E2M batch, 5 times each, by Go's
// default client, by Go with Expect: 100-continue, and by a raw socket that writes everything
// before it reads: every one must read the server's {code, message} answer (400 or 413), not a
// reset or broken pipe.
func TestFaultsOverBoundBody(t *testing.T) {
	requireFaults(t)
	logs := filepath.Join(t.TempDir(), "server.log")
	srv := startServer(t, logs, []string{"--data-dir", t.TempDir()})
	body := overBoundBatch()
	senders := []struct {
		name string
		send func() (int, []byte, error)
	}{
		{"Go's default client", func() (int, []byte, error) {
			return postBatch(srv.base, body, false)
		}},
		{"Go with Expect: 100-continue", func() (int, []byte, error) {
			return postBatch(srv.base, body, true)
		}},
		{"a raw socket writing everything before reading", func() (int, []byte, error) {
			return postBatchRaw(srv.base, body)
		}},
	}
	for _, s := range senders {
		var failures []string
		answers := map[string]int{}
		for range 5 {
			status, out, err := s.send()
			var e struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			}
			switch {
			case err != nil:
				failures = append(failures, transportLabel(err)+": "+err.Error())
			case (status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge) ||
				json.Unmarshal(out, &e) != nil || e.Code != status || e.Message == "":
				failures = append(failures, fmt.Sprintf("%d %.200s", status, out))
			default:
				answers[fmt.Sprintf("%d %s", status, e.Message)]++
			}
		}
		t.Logf("%s, %d bytes: %d of 5 read the answer %v", s.name, len(body), 5-len(failures), answers)
		if len(failures) > 0 {
			t.Errorf("%s: %d of 5 did not read a {code, message} answer of 400 or 413: %q", s.name, len(failures), failures)
		}
	}
	srv.alive(t, logs)
}

// postBatch posts the body to the E2M batch with a client of Go's default settings (60 s timeout),
// with Expect: 100-continue when expect is true, and reads the answer.
func postBatch(base string, body []byte, expect bool) (int, []byte, error) {
	transport := http.DefaultTransport.(*http.Transport).Clone()
	defer transport.CloseIdleConnections()
	client := &http.Client{Timeout: 60 * time.Second, Transport: transport}
	req, _ := http.NewRequest(http.MethodPost, base+e2mBatchExecutePath, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+crashKey)
	req.Header.Set("Content-Type", "application/json")
	if expect {
		req.Header.Set("Expect", "100-continue")
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	return res.StatusCode, out, err
}

// postBatchRaw writes the whole request, head and body, on a new connection, and only then reads
// the answer (60 s for all).
func postBatchRaw(base string, body []byte) (int, []byte, error) {
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		return 0, nil, err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(60 * time.Second))
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: faults\r\nAuthorization: Bearer %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		e2mBatchExecutePath, crashKey, len(body))
	request := append([]byte(head), body...)
	if n, err := conn.Write(request); err != nil {
		// Such a client has failed here. Whether the answer had arrived (and is lost to it) says
		// where the server stopped reading.
		_ = conn.SetDeadline(time.Now().Add(2 * time.Second))
		late := "no answer to read after it either"
		if res, readErr := http.ReadResponse(bufio.NewReader(conn), nil); readErr == nil {
			late = fmt.Sprintf("the answer, %d, was there to read after it", res.StatusCode)
		}
		return 0, nil, fmt.Errorf("after writing %d of %d bytes: %w (%s)", n, len(request), err, late)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	return res.StatusCode, out, err
}
