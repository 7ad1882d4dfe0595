// Command scenarios is CI's scenario program for the clients that oapi-codegen generates from the
// newest public documents of the services mgmtapi serves. .ci/publicclients/run generates one
// package per service into a throwaway module (imported as mgmtapi-ci/publicclients/<package>),
// copies these files beside them and builds them; nothing here is part of the mgmtapi module.
//
// Usage: scenarios -server http://ADDR -key KEY [-segments latest,5] [-allowlist FILE] [-run REGEXP]
//
//	scenarios -ready http://ADDR   exits 0 once the server answers /readyz
//
// Every scenario talks to http://ADDR/mgmt/openapi/latest (one base URL for every service, as a
// client in the field does; -segments runs them again under /5 and others) with "Authorization: Bearer KEY", through the generated client only:
// create, read, update, list, delete where the service has them, asserting what the public
// document promises. The one exception is the raw Alertmanager webhook that makes a case and an
// incident exist (no public operation creates them). A failure prints the service, the step, the
// status and the body. A scenario named in the allowlist (a known server gap, with its reason) may
// fail without failing the run; once it passes, the run says the entry is stale (without failing,
// so that closing a gap elsewhere never turns this step red).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"time"
)

// scenario is one service's walk through its generated client.
type scenario struct {
	service string // the public document's file name, without .json
	run     func(s *S)
}

var scenarios []scenario

func register(service string, run func(s *S)) {
	scenarios = append(scenarios, scenario{service: service, run: run})
}

// S carries one scenario's state: the base URL, the key, and what the scenario found.
type S struct {
	ctx     context.Context
	base    string // http://ADDR/mgmt/openapi/latest
	server  string // http://ADDR
	key     string
	service string
	steps   []string
}

// failure stops a scenario; run recovers it.
type failure struct{ msg string }

// auth is the request editor every generated client gets: the key as a bearer token.
func (s *S) auth(_ context.Context, r *http.Request) error {
	r.Header.Set("Authorization", "Bearer "+s.key)
	return nil
}

// failf stops the scenario at step with a message.
func (s *S) failf(step, format string, args ...any) {
	panic(failure{fmt.Sprintf("%s: step %q: %s", s.service, step, fmt.Sprintf(format, args...))})
}

// must stops the scenario when a generated client's call returned an error (transport, or an
// answer the client could not decode), or answered another status than want. It returns the
// answer's body decoded as JSON (nil when empty).
func (s *S) must(step string, resp any, err error, want int) map[string]any {
	s.steps = append(s.steps, step)
	if err != nil {
		s.failf(step, "client error: %v", err)
	}
	status, body := statusBody(resp)
	if status != want {
		s.failf(step, "status %d, want %d; body: %s", status, want, clip(body))
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		s.failf(step, "status %d, body is not a JSON object (%v): %s", status, err, clip(body))
	}
	return m
}

// mustOneOf is must for an answer that may carry any of the given statuses; it returns the status.
func (s *S) mustOneOf(step string, resp any, err error, want ...int) int {
	s.steps = append(s.steps, step)
	if err != nil {
		s.failf(step, "client error: %v", err)
	}
	status, body := statusBody(resp)
	for _, w := range want {
		if status == w {
			return status
		}
	}
	s.failf(step, "status %d, want one of %v; body: %s", status, want, clip(body))
	return 0
}

// statusBody reads StatusCode() and the Body field of an oapi-codegen response.
func statusBody(resp any) (int, []byte) {
	v := reflect.ValueOf(resp)
	if !v.IsValid() || (v.Kind() == reflect.Pointer && v.IsNil()) {
		return 0, nil
	}
	status := 0
	if m := v.MethodByName("StatusCode"); m.IsValid() {
		status = int(m.Call(nil)[0].Int())
	}
	var body []byte
	if f := reflect.Indirect(v).FieldByName("Body"); f.IsValid() {
		body = f.Bytes()
	}
	return status, body
}

// typed must not be nil: the generated client decoded the documented answer into it.
func (s *S) typed(step string, v any) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || (rv.Kind() == reflect.Pointer && rv.IsNil()) {
		s.failf(step, "the generated client decoded no documented answer (JSON200 is nil)")
	}
}

// body makes a generated request type from JSON, the way a user fills a client's struct.
func body[T any](s *S, step, text string) T {
	var v T
	dec := json.NewDecoder(strings.NewReader(text))
	if err := dec.Decode(&v); err != nil {
		s.failf(step, "the scenario's body does not fit the generated type %T: %v", v, err)
	}
	// Every field the scenario sets must survive the generated type: a field the type lacks
	// would be dropped silently.
	back, _ := json.Marshal(v)
	var sent, kept any
	_ = json.Unmarshal([]byte(text), &sent)
	_ = json.Unmarshal(back, &kept)
	if missing := lost(sent, kept, ""); missing != "" {
		s.failf(step, "the generated type %T drops %s", v, missing)
	}
	return v
}

// lost names the first path of sent that kept lacks.
func lost(sent, kept any, path string) string {
	switch sv := sent.(type) {
	case map[string]any:
		kv, ok := kept.(map[string]any)
		if !ok {
			return path
		}
		keys := make([]string, 0, len(sv))
		for k := range sv {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, ok := kv[k]; !ok {
				return path + "." + k
			}
			if p := lost(sv[k], kv[k], path+"."+k); p != "" {
				return p
			}
		}
	case []any:
		kv, ok := kept.([]any)
		if !ok || len(kv) != len(sv) {
			return path
		}
		for i := range sv {
			if p := lost(sv[i], kv[i], fmt.Sprintf("%s[%d]", path, i)); p != "" {
				return p
			}
		}
	}
	return ""
}

// get walks a decoded JSON value along a dotted path ("policy.name", "items.0.id").
func get(v any, path string) any {
	for _, part := range strings.Split(path, ".") {
		switch t := v.(type) {
		case map[string]any:
			v = t[part]
		case []any:
			var i int
			if _, err := fmt.Sscan(part, &i); err != nil || i < 0 || i >= len(t) {
				return nil
			}
			v = t[i]
		default:
			return nil
		}
	}
	return v
}

// str is get as a string ("" when absent); numbers print without exponent.
func str(v any, path string) string {
	switch t := get(v, path).(type) {
	case string:
		return t
	case float64:
		return fmt.Sprintf("%.0f", t)
	case nil:
		return ""
	default:
		return fmt.Sprint(t)
	}
}

// equal fails the step when the answer's field at path is not want.
func (s *S) equal(step string, answer any, path, want string) {
	if got := str(answer, path); got != want {
		b, _ := json.Marshal(answer)
		s.failf(step, "%s is %q, want %q; body: %s", path, got, want, clip(b))
	}
}

// present fails the step when the answer lacks the field at path.
func (s *S) present(step string, answer any, path string) {
	if get(answer, path) == nil {
		b, _ := json.Marshal(answer)
		s.failf(step, "%s is absent; body: %s", path, clip(b))
	}
}

// array fails the step unless the answer's field at path is a JSON array; absent counts as empty
// (proto3 JSON leaves empty repeated fields out).
func (s *S) array(step string, answer any, path string) []any {
	v := get(answer, path)
	if v == nil {
		return nil
	}
	a, ok := v.([]any)
	if !ok {
		b, _ := json.Marshal(answer)
		s.failf(step, "%s is not an array; body: %s", path, clip(b))
	}
	return a
}

// contains fails the step unless some element of the array at path has field key == want.
func (s *S) contains(step string, answer any, path, key, want string) {
	for _, e := range s.array(step, answer, path) {
		if str(e, key) == want {
			return
		}
	}
	b, _ := json.Marshal(answer)
	s.failf(step, "no element of %s has %s %q; body: %s", path, key, want, clip(b))
}

// lacks fails the step when some element of the array at path has field key == want.
func (s *S) lacks(step string, answer any, path, key, want string) {
	for _, e := range s.array(step, answer, path) {
		if str(e, key) == want {
			b, _ := json.Marshal(answer)
			s.failf(step, "an element of %s still has %s %q; body: %s", path, key, want, clip(b))
		}
	}
}

func clip(b []byte) string {
	const max = 1500
	t := strings.TrimSpace(string(b))
	if len(t) > max {
		return t[:max] + fmt.Sprintf("… (%d bytes)", len(t))
	}
	return t
}

// unique makes names that do not collide between runs against one server.
func unique(prefix string) string {
	return fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1_000_000_000)
}

func ptr[T any](v T) *T { return &v }

func main() {
	server := flag.String("server", "", "the server, http://ADDR")
	key := flag.String("key", "", "an API key with every permission")
	allowlist := flag.String("allowlist", "", "file of scenarios that may fail: SERVICE  reason")
	only := flag.String("run", "", "run only the services matching this regexp")
	segments := flag.String("segments", "latest", "comma-separated version segments: each scenario runs with the base URL http://ADDR/mgmt/openapi/SEGMENT")
	ready := flag.String("ready", "", "exit 0 once http://ADDR/readyz answers 200")
	flag.Parse()
	if *ready != "" {
		r, err := http.Get(*ready + "/readyz")
		if err != nil || r.StatusCode != 200 {
			os.Exit(1)
		}
		os.Exit(0)
	}
	if *server == "" || *key == "" {
		fmt.Fprintln(os.Stderr, "usage: scenarios -server http://ADDR -key KEY [-segments latest,5] [-allowlist FILE] [-run REGEXP]")
		os.Exit(2)
	}
	allowed, err := readAllowlist(*allowlist)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	var filter *regexp.Regexp
	if *only != "" {
		filter = regexp.MustCompile(*only)
	}
	sort.Slice(scenarios, func(i, j int) bool { return scenarios[i].service < scenarios[j].service })
	passed, failed, known, stale := 0, 0, 0, 0
	for _, segment := range strings.Split(*segments, ",") {
		base := *server + "/mgmt/openapi/" + segment
		for _, sc := range scenarios {
			if filter != nil && !filter.MatchString(sc.service) {
				continue
			}
			s := &S{ctx: context.Background(), server: *server, base: base, key: *key, service: sc.service}
			msg := runOne(s, sc.run)
			name := sc.service + " [" + segment + "]"
			reason, isAllowed := allowed[sc.service]
			switch {
			case msg == "" && isAllowed:
				passed++
				stale++
				fmt.Printf("STALE %s passes, but the allowlist says it fails (%s): remove the entry\n", name, reason)
			case msg == "":
				passed++
				fmt.Printf("ok   %s (%s)\n", name, strings.Join(s.steps, ", "))
			case isAllowed:
				known++
				fmt.Printf("KNOWN %s (allowlisted: %s)\n      %s: %s\n", name, reason, base, msg)
			default:
				failed++
				fmt.Printf("FAIL %s\n      %s: %s\n", name, base, msg)
			}
		}
	}
	for service := range allowed {
		found := false
		for _, sc := range scenarios {
			found = found || sc.service == service
		}
		if !found {
			failed++
			fmt.Printf("FAIL the allowlist names %s, which has no scenario\n", service)
		}
	}
	if stale > 0 {
		fmt.Printf("%d allowlisted scenario runs pass now: remove their entries from the allowlist\n", stale)
	}
	fmt.Printf("public clients: %d passed, %d failed, %d known failures (allowlisted)\n", passed, failed, known)
	if failed > 0 {
		os.Exit(1)
	}
}

func runOne(s *S, run func(*S)) (msg string) {
	defer func() {
		r := recover()
		if r == nil {
			return
		}
		if f, ok := r.(failure); ok {
			msg = f.msg
			return
		}
		last := "(none)"
		if len(s.steps) > 0 {
			last = s.steps[len(s.steps)-1]
		}
		msg = fmt.Sprintf("%s: panic after step %q: %v", s.service, last, r)
	}()
	run(s)
	return ""
}

// readAllowlist reads "SERVICE reason…" lines; # starts a comment.
func readAllowlist(path string) (map[string]string, error) {
	out := map[string]string{}
	if path == "" {
		return out, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		service, reason, _ := strings.Cut(line, " ")
		reason = strings.TrimSpace(reason)
		if reason == "" {
			return nil, fmt.Errorf("%s: %s has no reason", path, service)
		}
		out[service] = reason
	}
	return out, sc.Err()
}

// post sends body to the server's path (outside the public documents) with the scenario's key,
// and returns the answer's body; anything but a 200 stops the scenario at step.
func (s *S) post(step, path, contentType string, body []byte) []byte {
	req, err := http.NewRequestWithContext(s.ctx, http.MethodPost, s.server+path, bytes.NewReader(body))
	if err != nil {
		s.failf(step, "%v", err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Authorization", "Bearer "+s.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		s.failf(step, "%v", err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		s.failf(step, "status %d, body %s", res.StatusCode, clip(out))
	}
	return out
}
