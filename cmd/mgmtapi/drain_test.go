package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestDrainWith32BusyConnections: 32 clients, each on its own keep-alive connection, send
// requests back to back (lists and creates) while the server gets SIGTERM (with a 1 s shutdown
// delay) and stops. No request fails: during the delay every answer carries Connection: close, so
// each client opens its next request on a new connection, and the server closes connections only
// after answering on them, never under a request on its way. What the clients may see once the
// listener is closed are refused connects (ECONNREFUSED, or a connection the kernel had queued
// for the closed listener reset before any request was read), counted apart. Meanwhile /readyz
// answers 503.
func TestDrainWith32BusyConnections(t *testing.T) {
	engines(t, func(t *testing.T, args []string) {
		p := start(t, map[string]string{"MGMTAPI_BOOTSTRAP_KEY": chosenKey},
			append(args, "--shutdown-delay", "1s", "--log-level", "warn")...)
		base := "http://" + p.addr
		const clients = 32
		var (
			answered, closedAnswers, refusedConnects atomic.Int64
			mu                                       sync.Mutex
			failures                                 []string
			wg                                       sync.WaitGroup
		)
		stop := make(chan struct{})
		fail := func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			if len(failures) < 20 {
				failures = append(failures, fmt.Sprintf(format, args...))
			}
		}
		for c := range clients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				transport := &http.Transport{MaxIdleConnsPerHost: 1}
				defer transport.CloseIdleConnections()
				client := &http.Client{Transport: transport, Timeout: 20 * time.Second}
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					method, body := "GET", ""
					if i%2 == 1 {
						method = "POST"
						body = fmt.Sprintf(`{"name":"drain-%d-%d","groups":[{"name":"g","rules":[{"record":"r","expr":"up"}]}]}`, c, i)
					}
					req, _ := http.NewRequest(method, base+crashRulesPath, strings.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+chosenKey)
					if body != "" {
						req.Header.Set("Content-Type", "application/json")
					}
					var reused bool
					req = req.WithContext(httptrace.WithClientTrace(req.Context(), &httptrace.ClientTrace{
						GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
					}))
					res, err := client.Do(req)
					if err != nil {
						if errors.Is(err, syscall.ECONNREFUSED) ||
							!reused && (errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF)) {
							refusedConnects.Add(1)
							time.Sleep(10 * time.Millisecond)
							continue
						}
						fail("%s (reused connection %v): %v", method, reused, err)
						continue
					}
					_, _ = io.Copy(io.Discard, res.Body)
					res.Body.Close()
					if res.StatusCode/100 != 2 {
						fail("%s: %d", method, res.StatusCode)
					}
					answered.Add(1)
					if res.Close {
						closedAnswers.Add(1)
					}
				}
			}()
		}
		for answered.Load() < 5*clients {
			time.Sleep(time.Millisecond)
		}
		p.terminate()
		for {
			res, err := http.Get(base + "/readyz")
			if err != nil {
				t.Fatalf("/readyz during the shutdown delay: %v", err)
			}
			res.Body.Close()
			if res.StatusCode == http.StatusServiceUnavailable {
				break
			}
		}
		if err := p.wait(); err != nil {
			t.Fatalf("run: %v", err)
		}
		// Every client has seen the listener closed, or sees it on its next request.
		time.Sleep(100 * time.Millisecond)
		close(stop)
		wg.Wait()
		t.Logf("%d answered (%d with Connection: close), %d refused connects, %d failed",
			answered.Load(), closedAnswers.Load(), refusedConnects.Load(), len(failures))
		if len(failures) > 0 {
			t.Fatalf("requests failed during the drain:\n%s", strings.Join(failures, "\n"))
		}
		if closedAnswers.Load() < clients {
			t.Fatalf("only %d answers carried Connection: close during the drain", closedAnswers.Load())
		}
	})
}
