package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"
)

// request is one request of a scenario: the same method, path and body go to both servers.
type request struct {
	method string
	path   string // with its query
	body   []byte
	// authorization replaces the generator's Authorization header when it is not empty.
	authorization string
}

// nextRequest gives the request a worker sends next; seq counts the worker's requests from 0.
type nextRequest func(worker, seq int) request

// result is what one round (or several merged) measured against one server.
type result struct {
	requests  int
	elapsed   time.Duration
	latencies []time.Duration
	statuses  map[int]int // non-2xx answers by status code
	failures  int         // requests that got no answer at all (connection errors)
	lastError string
}

// merge adds o to r; latencies are kept whole so that percentiles cover every round.
func (r *result) merge(o result) {
	r.requests += o.requests
	r.elapsed += o.elapsed
	r.latencies = append(r.latencies, o.latencies...)
	for code, n := range o.statuses {
		if r.statuses == nil {
			r.statuses = map[int]int{}
		}
		r.statuses[code] += n
	}
	r.failures += o.failures
	if o.lastError != "" {
		r.lastError = o.lastError
	}
}

func (r *result) rate() float64 {
	if r.elapsed <= 0 {
		return 0
	}
	return float64(r.requests) / r.elapsed.Seconds()
}

// percentile is the q-quantile (0 < q ≤ 1) of the latencies; it sorts them in place.
func (r *result) percentile(q float64) time.Duration {
	if len(r.latencies) == 0 {
		return 0
	}
	slices.Sort(r.latencies)
	i := int(q*float64(len(r.latencies))+0.5) - 1
	return r.latencies[max(0, min(i, len(r.latencies)-1))]
}

// unsuccessful counts the answers that were not 2xx plus the requests that got none.
func (r *result) unsuccessful() int {
	n := r.failures
	for _, c := range r.statuses {
		n += c
	}
	return n
}

// generator sends requests over a fixed number of keep-alive connections: each worker owns one
// connection and sends its next request when the answer to the previous one has been read.
type generator struct {
	connections int
	header      http.Header // sent with every request (the API key)
}

// run drives baseURL for d with next and measures every answer. The body of each answer is read
// to its end, so that a server is never credited for an answer it has not finished writing.
func (g generator) run(ctx context.Context, baseURL string, d time.Duration, next nextRequest) result {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	perWorker := make([]result, g.connections)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range g.connections {
		wg.Add(1)
		go func() {
			defer wg.Done()
			perWorker[w] = g.worker(ctx, baseURL, w, next)
		}()
	}
	wg.Wait()
	total := result{elapsed: time.Since(start)}
	for _, r := range perWorker {
		total.merge(r)
	}
	return total
}

func (g generator) worker(ctx context.Context, baseURL string, w int, next nextRequest) result {
	transport := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        1,
		MaxIdleConnsPerHost: 1,
		MaxConnsPerHost:     1,
		DisableCompression:  true,
	}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}
	res := result{latencies: make([]time.Duration, 0, 4096)}
	for seq := 0; ctx.Err() == nil; seq++ {
		rq := next(w, seq)
		var body io.Reader
		if rq.body != nil {
			body = bytes.NewReader(rq.body)
		}
		req, err := http.NewRequestWithContext(ctx, rq.method, baseURL+rq.path, body)
		if err != nil {
			res.failures++
			res.lastError = err.Error()
			return res
		}
		req.Header = g.header.Clone()
		if rq.authorization != "" {
			req.Header.Set("Authorization", rq.authorization)
		}
		if rq.body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		began := time.Now()
		resp, err := client.Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		took := time.Since(began)
		if ctx.Err() != nil {
			break // the round ended during this request: it is not counted
		}
		if err != nil {
			res.failures++
			res.lastError = err.Error()
			continue
		}
		res.requests++
		res.latencies = append(res.latencies, took)
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			if res.statuses == nil {
				res.statuses = map[int]int{}
			}
			res.statuses[resp.StatusCode]++
		}
	}
	return res
}
