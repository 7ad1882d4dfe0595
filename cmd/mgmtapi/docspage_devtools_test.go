package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// devtools drives a headless Chromium through the DevTools protocol over --remote-debugging-pipe:
// commands are JSON messages ended by a NUL byte written to the browser's fd 3, answers and events
// come back the same way on its fd 4.
type devtools struct {
	t       *testing.T
	pipe    *os.File
	session string

	mu      sync.Mutex
	next    int
	pending map[int]chan devtoolsMessage
	reports []string // what the page reported: console errors, log entries, exceptions
}

type devtoolsMessage struct {
	ID        int             `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct{ Message string }
	SessionID string `json:"sessionId,omitempty"`
}

// startDevtools starts Chromium with an empty page and attaches to it.
func startDevtools(t *testing.T) *devtools {
	t.Helper()
	bin := chromiumBinary(t)
	commandsR, commandsW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	answersR, answersW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, append(chromiumFlags(t), "--remote-debugging-pipe", "--window-size=1280,900", "about:blank")...)
	cmd.ExtraFiles = []*os.File{commandsR, answersW}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", bin, err)
	}
	commandsR.Close()
	answersW.Close()
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		commandsW.Close()
		answersR.Close()
	})
	d := &devtools{t: t, pipe: commandsW, pending: map[int]chan devtoolsMessage{}}
	go d.read(answersR)

	var targets struct {
		TargetInfos []struct{ TargetID, Type string }
	}
	d.call("", "Target.getTargets", nil, &targets)
	for _, target := range targets.TargetInfos {
		if target.Type == "page" {
			var attached struct{ SessionID string }
			d.call("", "Target.attachToTarget", map[string]any{"targetId": target.TargetID, "flatten": true}, &attached)
			d.session = attached.SessionID
		}
	}
	if d.session == "" {
		t.Fatalf("Chromium shows no page: %+v\n%s", targets, stderr.String())
	}
	for _, domain := range []string{"Page", "Runtime", "Log"} {
		d.call(d.session, domain+".enable", nil, nil)
	}
	return d
}

func (d *devtools) read(r *os.File) {
	br := bufio.NewReader(r)
	for {
		raw, err := br.ReadBytes(0)
		if err != nil {
			d.mu.Lock()
			for id, ch := range d.pending {
				close(ch)
				delete(d.pending, id)
			}
			d.mu.Unlock()
			return
		}
		var m devtoolsMessage
		if json.Unmarshal(raw[:len(raw)-1], &m) != nil {
			continue
		}
		d.mu.Lock()
		if ch, ok := d.pending[m.ID]; ok && m.ID != 0 {
			delete(d.pending, m.ID)
			ch <- m
		} else if report := devtoolsReport(m); report != "" {
			d.reports = append(d.reports, report)
		}
		d.mu.Unlock()
	}
}

// devtoolsReport describes an event that tells of something wrong on the page, or returns "".
func devtoolsReport(m devtoolsMessage) string {
	switch m.Method {
	case "Log.entryAdded":
		var p struct {
			Entry struct{ Source, Level, Text, URL string }
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.Entry.Level == "error" || p.Entry.Source == "security" {
			return fmt.Sprintf("log (%s, %s): %s %s", p.Entry.Source, p.Entry.Level, p.Entry.Text, p.Entry.URL)
		}
	case "Runtime.consoleAPICalled":
		var p struct {
			Type string
			Args []struct{ Value any }
		}
		_ = json.Unmarshal(m.Params, &p)
		if p.Type == "error" || p.Type == "assert" {
			return fmt.Sprintf("console.%s: %v", p.Type, p.Args)
		}
	case "Runtime.exceptionThrown":
		return "exception: " + string(m.Params)
	}
	return ""
}

// call sends a command and decodes its result into result (when not nil).
func (d *devtools) call(session, method string, params any, result any) {
	d.t.Helper()
	ch := make(chan devtoolsMessage, 1)
	d.mu.Lock()
	d.next++
	id := d.next
	d.pending[id] = ch
	d.mu.Unlock()
	command := map[string]any{"id": id, "method": method}
	if params != nil {
		command["params"] = params
	}
	if session != "" {
		command["sessionId"] = session
	}
	msg, err := json.Marshal(command)
	if err != nil {
		d.t.Fatal(err)
	}
	if _, err := d.pipe.Write(append(msg, 0)); err != nil {
		d.t.Fatalf("%s: %v", method, err)
	}
	select {
	case m, ok := <-ch:
		if !ok {
			d.t.Fatalf("%s: Chromium closed the pipe", method)
		}
		if m.Error != nil {
			d.t.Fatalf("%s: %s", method, m.Error.Message)
		}
		if result != nil {
			if err := json.Unmarshal(m.Result, result); err != nil {
				d.t.Fatalf("%s: %v in %s", method, err, m.Result)
			}
		}
	case <-time.After(2 * time.Minute):
		d.t.Fatalf("%s: no answer from Chromium", method)
	}
}

// evaluate runs a JavaScript expression in the page and returns its value as JSON.
func (d *devtools) evaluate(expression string) json.RawMessage {
	d.t.Helper()
	var r struct {
		Result           struct{ Value json.RawMessage }
		ExceptionDetails json.RawMessage
	}
	d.call(d.session, "Runtime.evaluate", map[string]any{"expression": expression, "returnByValue": true, "awaitPromise": true}, &r)
	if r.ExceptionDetails != nil {
		d.t.Fatalf("%s: %s", expression, r.ExceptionDetails)
	}
	return r.Result.Value
}

// waitFor evaluates a JavaScript condition until it is true; a page that never gets there fails
// the test after a minute (a bound for a stuck page, not a measure of speed).
func (d *devtools) waitFor(what, condition string) {
	d.t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		if string(d.evaluate("Boolean("+condition+")")) == "true" {
			return
		}
		if time.Now().After(deadline) {
			d.mu.Lock()
			reports := strings.Join(d.reports, "\n")
			d.mu.Unlock()
			d.t.Fatalf("the page never showed %s (%s); it reported:\n%s", what, condition, reports)
		}
	}
}

// TestReferencePageTriesAnOperation drives the page as a reader would: it opens /docs at an
// operation's deep link, authorizes with a key, presses "Try it out" and "Execute", and finds the
// server's 200 answer on the page; under the page's Content-Security-Policy, with every host but
// 127.0.0.1 unresolvable, and with no error, exception or policy violation reported.
func TestReferencePageTriesAnOperation(t *testing.T) {
	chromiumBinary(t)
	const key = "mgmt_docs_page_devtools_test_key_0123456789"
	p := start(t, map[string]string{"MGMTAPI_BOOTSTRAP_KEY": key}, "--data-dir", t.TempDir())
	d := startDevtools(t)

	const operation = `document.getElementById("operations-api-keys-ListApiKeys")`
	d.call(d.session, "Page.navigate", map[string]any{"url": "http://" + p.addr + "/docs#/api-keys/ListApiKeys"}, nil)
	d.waitFor("the operation, expanded by its deep link", operation+`?.querySelector(".try-out__btn")`)
	d.evaluate(`ui.preauthorizeApiKey("apiKey", ` + jsString(key) + `)`)
	d.evaluate(operation + `.querySelector(".try-out__btn").click()`)
	d.waitFor(`the "Execute" button`, operation+`.querySelector("button.execute")`)
	d.evaluate(operation + `.querySelector("button.execute").click()`)
	d.waitFor("the answer", operation+`.querySelector(".live-responses-table tr.response .response-col_status")`)

	var shown struct{ Status, URL, Body string }
	if err := json.Unmarshal(d.evaluate(`(() => { const op = `+operation+`; return {
		status: op.querySelector(".live-responses-table tr.response .response-col_status").textContent.trim(),
		url: op.querySelector(".request-url pre")?.textContent ?? "",
		body: op.querySelector(".live-responses-table tr.response .response-col_description")?.textContent ?? "" }; })()`), &shown); err != nil {
		t.Fatal(err)
	}
	wantURL := "http://" + p.addr + "/mgmt/openapi/5/aaa/api-keys/v3/list/all"
	if shown.Status != "200" || shown.URL != wantURL || !strings.Contains(shown.Body, `"keys"`) {
		t.Errorf("after Execute the page shows status %q for %q with body %.300q; want 200 from %s listing the keys",
			shown.Status, shown.URL, shown.Body, wantURL)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, report := range d.reports {
		t.Errorf("the page reported %s", report)
	}
}

// jsString returns s as a JavaScript string literal.
func jsString(s string) string { b, _ := json.Marshal(s); return string(b) }
