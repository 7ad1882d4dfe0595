package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The overbound measurement (-scenarios overbound, not in all) sends request bodies far over their
// arrays' bounds, several at once, to a fresh mgmtapi, and prints each answer's status and time
// and the server's peak resident set size over the burst. The server must refuse each one from
// the first items past the bound, without reading or decoding the rest: the targets are a peak
// RSS of at most overboundPeakTarget and every answer within overboundTimeTarget. It fails (exit
// status 1) when an answer is not the 400 naming the bound or a target is missed.

const (
	overboundPeakTarget = 256 << 20
	overboundTimeTarget = time.Second
)

// overboundCase is one burst: concurrent copies of one body.
type overboundCase struct {
	title      string
	method     string
	path       string
	body       []byte
	concurrent int
	// want is the beginning of the refusal's message.
	want string
}

func overboundCases() []overboundCase {
	return []overboundCase{
		{title: "E2M atomic batch of 250,000 deletes", method: "POST",
			path: "/mgmt/openapi/5/events2metrics/events2metrics/v2/all/execute", body: e2mDeleteBatch(250_000),
			concurrent: 8, want: "requests: must have at most 100 items"},
		{title: "span-policy overwrite of 100,000 entries", method: "PUT",
			path: "/mgmt/openapi/4/dataplans/span-policies/v1", body: spanPolicyOverwrite(100_000),
			concurrent: 8, want: "policies: must have at most 200 items"},
		{title: "span-policy overwrite of 100,000 entries", method: "PUT",
			path: "/mgmt/openapi/4/dataplans/span-policies/v1", body: spanPolicyOverwrite(100_000),
			concurrent: 16, want: "policies: must have at most 200 items"},
	}
}

func e2mDeleteBatch(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"requests":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"delete":{"id":"5b0f4c1e-2a3d-4e5f-8a9b-%012d"}}`, i)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

func spanPolicyOverwrite(n int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"policies":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"policy":{"name":"p%d","priority":"PRIORITY_TYPE_BLOCK"},`+
			`"spanRules":{"actionRule":{"name":"GET /healthz","ruleTypeId":"RULE_TYPE_ID_IS"}}}`, i)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// overboundAnswer is what one request of a burst got.
type overboundAnswer struct {
	status  int
	message string
	took    time.Duration
	err     error
}

// measureOverbound runs the bursts of overboundCases against a fresh mgmtapi.
func measureOverbound(ctx context.Context, o options, bin, workDir string, stdout, stderr io.Writer) error {
	dir := filepath.Join(workDir, "overbound")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	server, err := startMgmtapi(ctx, bin, dir, o.databaseURL)
	if err != nil {
		return err
	}
	defer server.stop()
	key, err := createTeam(ctx, server, "mgmtload-overbound-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "mgmtload overbound %s: over-bound bodies sent at once; targets: peak RSS ≤ %s, each answer ≤ %s\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), mib(overboundPeakTarget), overboundTimeTarget)
	missed := 0
	for _, c := range overboundCases() {
		fmt.Fprintf(stderr, "mgmtload: overbound: %d × %s\n", c.concurrent, c.title)
		exact := server.resetPeakRSS()
		before := server.rss()
		answers := make([]overboundAnswer, c.concurrent)
		var wg sync.WaitGroup
		for i := range answers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				answers[i] = sendOverbound(ctx, server.baseURL, key, c)
			}()
		}
		wg.Wait()
		peak := server.peakRSS()
		scope := "over the burst"
		if !exact {
			scope = "since the server started (the kernel did not let it be reset)"
		}
		fmt.Fprintf(stdout, "\n%d × %s (%.1f MB each): RSS before %s, peak %s %s\n",
			c.concurrent, c.title, float64(len(c.body))/1e6, mib(before), mib(peak), scope)
		var slowest time.Duration
		for i, a := range answers {
			slowest = max(slowest, a.took)
			switch {
			case a.err != nil:
				fmt.Fprintf(stdout, "  %2d: %s, error: %v\n", i+1, ms(a.took), a.err)
				missed++
			default:
				fmt.Fprintf(stdout, "  %2d: %s, %d %s\n", i+1, ms(a.took), a.status, a.message)
				if a.status != http.StatusBadRequest || !strings.HasPrefix(a.message, c.want) {
					missed++
				}
			}
		}
		verdict := "met"
		if peak > overboundPeakTarget || slowest > overboundTimeTarget {
			verdict = "MISSED"
			missed++
		}
		fmt.Fprintf(stdout, "  slowest %s, peak %s: target %s\n", ms(slowest), mib(peak), verdict)
	}
	if missed > 0 {
		return fmt.Errorf("overbound: %d answers or targets were not as required", missed)
	}
	return nil
}

// sendOverbound sends c's body once and reads the answer.
func sendOverbound(ctx context.Context, baseURL, key string, c overboundCase) overboundAnswer {
	req, err := http.NewRequestWithContext(ctx, c.method, baseURL+c.path, bytes.NewReader(c.body))
	if err != nil {
		return overboundAnswer{err: err}
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	// A connection of its own: the server closes it after refusing a body it did not read. The
	// request does not ask for the close itself (Connection: close): Go's server then closes at
	// once, without the half-close and wait that let the client read the answer before the reset.
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: time.Minute}
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return overboundAnswer{took: time.Since(start), err: err}
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	took := time.Since(start)
	if err != nil {
		return overboundAnswer{took: took, err: err}
	}
	var e struct {
		Message string `json:"message"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return overboundAnswer{status: resp.StatusCode, took: took, err: errors.New("answer is not the Error body: " + string(raw))}
	}
	return overboundAnswer{status: resp.StatusCode, message: e.Message, took: took}
}
