package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apidocument"
)

// The mutation measurement (-scenarios mutation, not in all) sends -mutation-requests mutated
// requests, spread evenly at random over every operation of api/openapi.yaml, from -connections
// keep-alive connections, to a fresh mgmtapi, and prints the answers by status and by kind of
// mutation and the server's peak resident set size over the run. The requests are built from
// the document through apidocument (each operation's example or minimal body, its path
// parameters naming resources the run created first, its required query parameters) and then
// broken in one way each: a property replaced by a hostile value, an array far past its bound, a
// long string, bytes of the JSON text edited, a hostile whole body (also where none is
// declared), path parameter, query or Content-Type; about one request in ten goes as built. The random source is seeded with
// mutationSeed, so two runs send the same requests (in an order the connections decide).
//
// Its targets: no 5xx (a 503 with Retry-After, the server shedding load, is counted apart and
// is not a failure), no request without an answer, every 4xx the {code, message} body, and a
// peak RSS of at most mutationPeakTarget. It fails (exit status 1) when one is missed.

const (
	mutationPeakTarget = 256 << 20
	mutationSeed       = 15
	// mutationSamples is how many failing requests of each kind the report shows.
	mutationSamples = 5
)

// mutationTarget is one operation, ready to be sent: what every mutation of it starts from.
type mutationTarget struct {
	op            apidocument.Operation
	authorization string
	pathArgs      map[string]string // path parameter → escaped value
	query         url.Values        // the required query parameters
	body          any               // the valid body; nil without one
	bodyJSON      []byte
	properties    []apidocument.PropertyPath
}

// mutatedRequest is one request of the run.
type mutatedRequest struct {
	kind          string // the mutation, e.g. "property", "bytes"
	method        string
	target        string // path and query
	contentType   string // "" sends none
	body          []byte
	authorization string
}

// measureMutation runs the mutation measurement against a fresh mgmtapi.
func measureMutation(ctx context.Context, o options, bin, workDir string, stdout, stderr io.Writer) error {
	dir := filepath.Join(workDir, "mutation")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	doc, err := apidocument.Load()
	if err != nil {
		return err
	}
	ops, err := doc.Operations()
	if err != nil {
		return err
	}
	server, err := startMgmtapi(ctx, bin, dir, o.databaseURL)
	if err != nil {
		return err
	}
	defer server.stop()
	engine := "SQLite"
	if o.databaseURL != "" {
		engine = "PostgreSQL"
	}

	var created struct {
		Team struct {
			ID int64 `json:"id"`
		} `json:"team"`
		APIKey struct {
			Value string `json:"value"`
		} `json:"apiKey"`
	}
	name := "mgmtload-mutation-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := call(ctx, server.baseURL, server.operatorKey, "POST", adminTeamsPath, map[string]any{"name": name}, &created); err != nil {
		return fmt.Errorf("create the team %s: %w", name, err)
	}
	teamKey := "Bearer " + created.APIKey.Value
	fmt.Fprintln(stderr, "mgmtload: mutation: creating one of everything the document can create")
	ids, creates := seedMutation(ctx, doc, ops, server.baseURL, teamKey)
	ids = append(ids, seededID{path: adminTeamsPath, key: "team_id", id: strconv.FormatInt(created.Team.ID, 10), integer: true})
	targets := make([]mutationTarget, len(ops))
	for i, op := range ops {
		targets[i] = newMutationTarget(doc, op, ids, teamKey, "Bearer "+server.operatorKey)
	}

	connections := o.connections
	fmt.Fprintf(stdout, "mgmtload mutation %s: %d mutated requests over the %d operations of api/openapi.yaml from %d connections, mgmtapi on %s (seed %d); targets: no 5xx, peak RSS ≤ %s\n",
		time.Now().UTC().Format("2006-01-02 15:04 UTC"), o.mutationRequests, len(ops), connections, engine, mutationSeed, mib(mutationPeakTarget))
	fmt.Fprintf(stdout, "seeding: %d creates answered 2xx, %d ids kept for path parameters and bodies\n", creates, len(ids))

	exact := server.resetPeakRSS()
	before := server.rss()
	run := &mutationRun{targets: targets, doc: doc, total: int64(o.mutationRequests), statuses: map[int]int{}, kinds: map[string]*kindCount{}}
	transport := &http.Transport{MaxIdleConns: connections, MaxIdleConnsPerHost: connections}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport, Timeout: time.Minute}

	var sampled atomic.Int64 // the largest VmRSS seen by the sampler
	stopSampling := make(chan struct{})
	samplerDone := make(chan struct{})
	go func() {
		defer close(samplerDone)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		last := time.Now()
		for {
			select {
			case <-stopSampling:
				return
			case <-tick.C:
				rss := server.rss()
				if rss > sampled.Load() {
					sampled.Store(rss)
				}
				if time.Since(last) >= 10*time.Second {
					last = time.Now()
					fmt.Fprintf(stderr, "mgmtload: mutation: %d of %d sent, RSS %s\n", run.next.Load(), run.total, mib(rss))
				}
			}
		}
	}()
	started := time.Now()
	var wg sync.WaitGroup
	for w := range connections {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run.work(ctx, client, server.baseURL, rand.New(rand.NewPCG(mutationSeed, uint64(w))))
		}()
	}
	wg.Wait()
	elapsed := time.Since(started)
	close(stopSampling)
	<-samplerDone
	peak := server.peakRSS()
	if !exact {
		peak = max(sampled.Load(), 0) // VmHWM covers the seeding and start too; the sampler does not
	}
	after := server.rss()
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", server.cmd.Process.Pid)); err != nil {
		return fmt.Errorf("mutation: mgmtapi is gone:\n%s", server.logTail())
	}
	err = run.report(stdout, elapsed, before, peak, after, exact)
	if ctx.Err() != nil { // interrupted: what was sent is reported, and the run is not complete
		return fmt.Errorf("mutation: interrupted after %d requests: %w", run.next.Load(), ctx.Err())
	}
	return err
}

// seededID is a resource the seeding created: its id, the property that held it and the path it
// was created at.
type seededID struct {
	path, key, id string
	// integer is true for an id the answer held as a JSON number; such an id names only integer
	// path parameters.
	integer bool
}

// seedMutation sends the example (or minimal body) of every team operation that creates (a POST
// without path parameters whose example needs nothing existing) and keeps the ids the answers
// carry, so that path parameters can name resources that exist. It returns them and how many
// creates were answered 2xx; a refused create is no error (the run then probes a missing id).
func seedMutation(ctx context.Context, doc *apidocument.Document, ops []apidocument.Operation, baseURL, teamKey string) ([]seededID, int) {
	var out []seededID
	creates := 0
	for _, op := range ops {
		if op.Method != http.MethodPost || op.Body == nil || op.NeedsExisting || op.Operator || op.HasPathParams() {
			continue
		}
		body := op.Example
		if body == nil {
			body = doc.Minimal(op.Body)
		}
		var answer any
		if err := call(ctx, baseURL, strings.TrimPrefix(teamKey, "Bearer "), op.Method, withQuery(op.Path, requiredQuery(doc, op)), body, &answer); err != nil {
			continue
		}
		creates++
		for _, found := range apidocument.IDsIn(answer) {
			s := seededID{key: found.Key, id: found.Value, integer: found.Integer}
			if !slices.ContainsFunc(out, func(o seededID) bool { return o.id == s.id }) {
				s.path = op.Path
				out = append(out, s)
			}
		}
	}
	return out, creates
}

// requiredQuery gives every required query parameter of op its minimal value.
func requiredQuery(doc *apidocument.Document, op apidocument.Operation) url.Values {
	q := url.Values{}
	for _, p := range op.Params {
		if p.In == "query" && p.Required {
			doc.AddMinimal(q, p)
		}
	}
	return q
}

// newMutationTarget prepares op: its path parameters name the seeded resource of the closest
// area (an integer one for an integer parameter), its body is its example or minimal instance.
func newMutationTarget(doc *apidocument.Document, op apidocument.Operation, ids []seededID, teamKey, operatorKey string) mutationTarget {
	t := mutationTarget{op: op, authorization: teamKey, pathArgs: map[string]string{}, query: requiredQuery(doc, op)}
	if op.Operator {
		t.authorization = operatorKey
	}
	for _, p := range op.PathParams() {
		prefix, _, _ := strings.Cut(op.Path, "{"+p.Name+"}")
		typ, _ := p.Schema["type"].(string)
		t.pathArgs[p.Name] = url.PathEscape(closestID(prefix, p.Name, ids, typ == "integer"))
	}
	if op.Body != nil {
		t.body = op.Example
		if t.body == nil {
			t.body = doc.Minimal(op.Body)
		}
		t.bodyJSON, _ = json.Marshal(t.body)
		t.properties = doc.PropertyPaths(op.Body)
	}
	return t
}

// closestID is the id seeded under the parameter's own name (team_id: the run's team), or else
// at the creating path that shares the most segments with prefix, or else 1 or x.
func closestID(prefix, param string, ids []seededID, integer bool) string {
	for _, s := range ids {
		if s.key == param {
			return s.id
		}
	}
	version := func(p string) []string {
		parts := strings.Split(p, "/")
		if len(parts) > 3 && parts[1] == "mgmt" && parts[2] == "openapi" {
			parts = parts[4:] // /mgmt/openapi/<n>/ names the version, not the resource
		}
		return parts
	}
	want := version(prefix)
	best, bestShared := "", 0
	for _, s := range ids {
		if s.integer != integer {
			continue
		}
		have := version(s.path)
		shared := 0
		for shared < len(have) && shared < len(want) && have[shared] == want[shared] {
			shared++
		}
		if shared > bestShared || (shared == bestShared && shared > 0 && s.key == "id") {
			best, bestShared = s.id, shared
		}
	}
	switch {
	case best != "" && bestShared >= 1:
		return best
	case integer:
		return "1"
	}
	return "x"
}

// ---------------------------------------------------------------- the mutations

// hostileValues replace one property of a valid body (as raw JSON).
var hostileValues = []string{
	`null`, `0`, `-1`, `1e308`, `-1e308`, `1e400`, `1.5`, `-0`, `""`, `true`, `[]`, `{}`, `[null]`, `"NaN"`,
	`9223372036854775808`, `-9223372036854775809`, `"a\ud800b"`, `"\udc00"`, `"a\u0000b"`, `"\uffff"`,
	`"` + strings.Repeat("x", 70000) + `"`, `"../../etc/passwd"`, `"<script>alert(1)</script>"`,
	`"' OR 1=1 --"`, `"%s%n%x"`, strings.Repeat("9", 5000), strings.Repeat("[", 200) + strings.Repeat("]", 200),
	`{"$ref":"#/x"}`, `"2024-13-45T99:99:99Z"`, `"\u202e\u0000"`, `"00000000-0000-0000-0000-000000000000"`,
}

// hostileFragments are inserted into the JSON text of a valid body.
var hostileFragments = []string{
	"{", "}", "[", "]", `"`, `\`, `\u`, `\ud800`, "\xff", "\x00", ",", ":", `,"x":1`, "null", "\xed\xa0\x80",
	"\ufeff", strings.Repeat("[", 64), "1e999999", `"a":`, " ",
}

// hostileBodies replace a body whole.
var hostileBodies = []string{
	"", "{", "[]", "null", `"x"`, "1", "{}", strings.Repeat("[", 100) + strings.Repeat("]", 100),
	strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000), "{\"a\":\"\xff\xfe\"}", "\xff\xfe\xfd",
	`{"a":"` + strings.Repeat("x", 1<<20) + `"}`, `{"a":1,"a":{"x":[1]}}`, "\ufeff{}", `{"a":1} {}`,
	`[` + strings.Repeat(`{},`, 100000) + `{}]`,
}

var hostilePathValues = []string{
	"", "x", strings.Repeat("a", 300), strings.Repeat("a", 70000), "..", "-1", "+1", "01", "0", "99999999999999999999",
	"1e9", "5b0f4c1e-2a3d-4e5f-8a9b-0c1d2e3f4a5b", "null", "☃", "a b", "%00", "%ff", "%2F", "%E2%98%83", "%ed%a0%80",
}

var hostileQueryValues = []string{
	"x", "-1", "1e400", "", "true", strings.Repeat("a", 70000), "%00", "%ff", "-9223372036854775809", "%ed%a0%80",
	"NOT_A_VALUE", "2024-13-45T99:99:99Z", "0", "1", "[1]", `{"a":1}`,
}

var hostileContentTypes = []string{
	"", "text/plain", "application/json; charset=utf-16", "application/json; charset=latin1", ";;;",
	"application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/json; charset=UTF-8",
	"application/merge-patch+json", "application/json; charset=\"utf-8\"; x=\xff",
}

// mutationKinds are the mutations with their weights; each request draws among those that apply
// to its operation.
var mutationKinds = []struct {
	name   string
	weight int
}{
	{"as built", 10}, {"property", 28}, {"array past its bound", 6}, {"long string", 4}, {"bytes", 20},
	{"whole body", 6}, {"path", 10}, {"query", 10}, {"content type", 6},
}

// applies reports whether the mutation kind can break something of t: a body mutation needs a
// body (a property mutation, a property), a path mutation a path parameter.
func (t *mutationTarget) applies(kind string) bool {
	switch kind {
	case "property", "array past its bound", "long string":
		return len(t.properties) > 0
	case "bytes", "content type":
		return len(t.bodyJSON) > 0
	case "path":
		return len(t.pathArgs) > 0
	}
	return true
}

// mutate builds one request to t, broken in one way drawn by mutationKinds' weights among the
// kinds that apply to it.
func (t *mutationTarget) mutate(rng *rand.Rand, doc *apidocument.Document) mutatedRequest {
	total := 0
	for _, k := range mutationKinds {
		if t.applies(k.name) {
			total += k.weight
		}
	}
	draw := rng.IntN(total)
	kind := ""
	for _, k := range mutationKinds {
		if !t.applies(k.name) {
			continue
		}
		if draw < k.weight {
			kind = k.name
			break
		}
		draw -= k.weight
	}
	req := mutatedRequest{kind: kind, method: t.op.Method, authorization: t.authorization}
	args, query := t.pathArgs, t.query
	body := t.bodyJSON
	if t.op.Body != nil {
		req.contentType = "application/json"
	}
	switch kind {
	case "property", "array past its bound", "long string":
		p := t.properties[rng.IntN(len(t.properties))]
		var value any
		switch kind {
		case "property":
			value = json.RawMessage(hostileValues[rng.IntN(len(hostileValues))])
		case "array past its bound":
			value = overBoundArray(rng, doc, p)
		default:
			n := []int{1 << 10, 1 << 16, 1 << 20}[rng.IntN(3)]
			value = strings.Repeat(string(rune('a'+rng.IntN(26))), n)
		}
		body, _ = json.Marshal(doc.SetPath(t.body, p, value))
	case "bytes":
		body = editBytes(rng, body)
	case "whole body":
		body = []byte(hostileBodies[rng.IntN(len(hostileBodies))])
		if req.contentType == "" {
			req.contentType = "application/json" // a body where none is declared
		}
	case "path":
		args = maps.Clone(args)
		names := slices.Sorted(maps.Keys(args))
		args[names[rng.IntN(len(names))]] = escapedPathValue(hostilePathValues[rng.IntN(len(hostilePathValues))])
	case "query":
		query = breakQuery(rng, t.op, query)
	case "content type":
		req.contentType = hostileContentTypes[rng.IntN(len(hostileContentTypes))]
	}
	path := t.op.Path
	for name, v := range args {
		path = strings.ReplaceAll(path, "{"+name+"}", v)
	}
	req.target, req.body = withQuery(path, query), body
	return req
}

// overBoundArray is an array for the value at p: past the schema's maxItems when it has one
// (by one, or a hundred times over, at most 20,000), or of 10,000 items; each item is the minimal instance of
// the items' schema, or of the value's own schema when p does not lead to an array.
func overBoundArray(rng *rand.Rand, doc *apidocument.Document, p apidocument.PropertyPath) []any {
	schema := doc.Resolve(p[len(p)-1].Schema)
	n := 10_000
	if most, ok := apidocument.Number(schema["maxItems"]); ok {
		n = []int{int(most) + 1, int(most)*100 + 1}[rng.IntN(2)]
	}
	item := doc.Minimal(doc.Resolve(schema["items"]))
	if schema["type"] != "array" {
		item = doc.Minimal(schema)
	}
	out := make([]any, min(n, 20_000))
	for i := range out {
		out[i] = item
	}
	return out
}

// editBytes changes one to four places of the JSON text b: a byte replaced, a hostile fragment
// inserted, a range deleted or repeated, or the text cut short. A non-empty b always changes.
func editBytes(rng *rand.Rand, b []byte) []byte {
	out := slices.Clone(b)
	for range 1 + rng.IntN(4) {
		if len(out) == 0 {
			break
		}
		at := rng.IntN(len(out))
		switch rng.IntN(5) {
		case 0:
			out[at] ^= byte(1 + rng.IntN(255)) // another byte, never the same
		case 1:
			out = slices.Insert(out, at, []byte(hostileFragments[rng.IntN(len(hostileFragments))])...)
		case 2:
			out = slices.Delete(out, at, min(len(out), at+1+rng.IntN(16)))
		case 3:
			end := min(len(out), at+1+rng.IntN(64))
			out = slices.Insert(out, end, out[at:end]...)
		case 4:
			out = out[:at]
		}
	}
	if len(b) > 0 && bytes.Equal(out, b) {
		// The edits undid each other (a range deleted where it had been repeated): cut the
		// text short, which always changes it.
		out = out[:len(out)-1]
	}
	return out
}

// breakQuery gives a query parameter of op (or an undeclared one) a hostile value, repeats one,
// writes a query object's brackets wrong, or adds a thousand parameters.
func breakQuery(rng *rand.Rand, op apidocument.Operation, base url.Values) url.Values {
	q := url.Values{}
	for k, v := range base {
		q[k] = slices.Clone(v)
	}
	var names []string
	for _, p := range op.Params {
		if p.In == "query" {
			names = append(names, p.Name)
		}
	}
	names = append(names, "x")
	name := names[rng.IntN(len(names))]
	value := hostileQueryValues[rng.IntN(len(hostileQueryValues))]
	switch rng.IntN(6) {
	case 0, 1, 2:
		q.Set(name, value)
	case 3:
		q[name] = append(q[name], value, value)
	case 4:
		object := name
		if len(op.Objects) > 0 {
			object = op.Objects[rng.IntN(len(op.Objects))]
		}
		forms := []string{"[a][b][c]", "[99999999999]", "", ".x", "[]", "[0]", "[-1]", "[%ff]", "[" + strings.Repeat("a", 1000) + "]",
			strings.Repeat("[0]", 20)}
		q.Set(object+forms[rng.IntN(len(forms))], value)
	default:
		for i := range 1000 {
			q.Add(name+strconv.Itoa(i%7), strconv.Itoa(i))
		}
	}
	return q
}

// withQuery is path with q as its query (encodeQuery), if q has any parameter.
func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + encodeQuery(q)
}

// encodeQuery writes q, leaving values that are already percent-escapes (%00, %ff) as written so
// that they reach the server as bytes.
func encodeQuery(q url.Values) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(q)) {
		for _, v := range q[k] {
			if b.Len() > 0 {
				b.WriteByte('&')
			}
			b.WriteString(escapedQueryPart(k))
			b.WriteByte('=')
			b.WriteString(escapedQueryPart(v))
		}
	}
	return b.String()
}

func escapedQueryPart(s string) string {
	if strings.HasPrefix(s, "%") {
		return s
	}
	return url.QueryEscape(s)
}

// escapedPathValue is v as one path segment: as written when it is a percent-escape already.
func escapedPathValue(v string) string {
	if strings.HasPrefix(v, "%") {
		return v
	}
	return url.PathEscape(v)
}

// ---------------------------------------------------------------- running and counting

// mutationRun is the run's shared state: the next request to send and what the answers were.
type mutationRun struct {
	targets []mutationTarget
	doc     *apidocument.Document
	total   int64
	next    atomic.Int64

	mu           sync.Mutex
	statuses     map[int]int
	kinds        map[string]*kindCount
	shed         int // 503 with Retry-After: load shedding or the decode budget
	serverErrors []string
	noAnswer     []string
	noAnswers    int
	badBodies    []string
	badBodyCount int
}

// kindCount is what the requests of one kind of mutation got.
type kindCount struct{ sent, ok, clientError, serverError, noAnswer int }

// work sends requests until the run's total is reached.
func (r *mutationRun) work(ctx context.Context, client *http.Client, baseURL string, rng *rand.Rand) {
	for ctx.Err() == nil && r.next.Add(1) <= r.total {
		t := &r.targets[rng.IntN(len(r.targets))]
		req := t.mutate(rng, r.doc)
		status, header, answer, err := send(ctx, client, baseURL, req)
		r.count(t, req, status, header, answer, err)
	}
}

func send(ctx context.Context, client *http.Client, baseURL string, m mutatedRequest) (int, http.Header, []byte, error) {
	var body io.Reader = http.NoBody
	if len(m.body) > 0 {
		body = bytes.NewReader(m.body)
	}
	req, err := http.NewRequestWithContext(ctx, m.method, baseURL+m.target, body)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("not a request a client can send: %w", err)
	}
	req.Header.Set("Authorization", m.authorization)
	if m.contentType != "" {
		req.Header["Content-Type"] = []string{m.contentType}
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, answer, err
}

func (r *mutationRun) count(t *mutationTarget, m mutatedRequest, status int, header http.Header, answer []byte, err error) {
	describe := func() string {
		return fmt.Sprintf("%s, %s: %s %s, Content-Type %q, body %s\n      answer %d %s", t.op.ID, m.kind, m.method,
			shorten(m.target, 200), m.contentType, shorten(string(m.body), 200), status, shorten(string(answer), 300))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	k := r.kinds[m.kind]
	if k == nil {
		k = &kindCount{}
		r.kinds[m.kind] = k
	}
	k.sent++
	switch {
	case err != nil && status == 0 && strings.HasPrefix(err.Error(), "not a request"):
		k.sent-- // the client refused to send it; nothing was measured
		r.next.Add(-1)
		return
	case err != nil:
		k.noAnswer++
		r.noAnswers++
		if len(r.noAnswer) < mutationSamples {
			r.noAnswer = append(r.noAnswer, describe()+"\n      error "+err.Error())
		}
		return
	}
	r.statuses[status]++
	switch {
	case status == http.StatusServiceUnavailable && header.Get("Retry-After") != "":
		r.shed++
	case status >= 500:
		k.serverError++
		if len(r.serverErrors) < mutationSamples {
			r.serverErrors = append(r.serverErrors, describe())
		}
	case status >= 400:
		k.clientError++
		if problem := errorBodyProblem(status, answer); problem != "" {
			r.badBodyCount++
			if len(r.badBodies) < mutationSamples {
				r.badBodies = append(r.badBodies, describe()+"\n      "+problem)
			}
		}
	default:
		k.ok++
	}
}

// errorBodyProblem says what is wrong with an error answer, or "" when it is exactly {code,
// message} with code equal to the status and a message.
func errorBodyProblem(status int, answer []byte) string {
	var body struct {
		Code    *int    `json:"code"`
		Message *string `json:"message"`
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(answer, &all); err != nil {
		return "the answer is not a JSON object"
	}
	if err := json.Unmarshal(answer, &body); err != nil || len(all) != 2 || body.Code == nil || body.Message == nil {
		return "the answer is not exactly {code, message}"
	}
	if *body.Code != status || strings.TrimSpace(*body.Message) == "" {
		return fmt.Sprintf("code %d for status %d, or an empty message", *body.Code, status)
	}
	return ""
}

func (r *mutationRun) report(w io.Writer, elapsed time.Duration, before, peak, after int64, exact bool) error {
	sent := 0
	for _, k := range r.kinds {
		sent += k.sent
	}
	fmt.Fprintf(w, "sent %d in %s (%.0f requests/s)\n", sent, elapsed.Round(time.Second), float64(sent)/elapsed.Seconds())
	var byStatus []string
	for _, code := range slices.Sorted(maps.Keys(r.statuses)) {
		byStatus = append(byStatus, fmt.Sprintf("%d: %d", code, r.statuses[code]))
	}
	fmt.Fprintf(w, "answers by status: %s\n", strings.Join(byStatus, ", "))
	fmt.Fprintln(w, "by mutation (sent, 2xx, 4xx, 5xx, no answer):")
	for _, k := range mutationKinds {
		if c := r.kinds[k.name]; c != nil {
			fmt.Fprintf(w, "  %-22s %7d %7d %7d %4d %4d\n", k.name, c.sent, c.ok, c.clientError, c.serverError, c.noAnswer)
		}
	}
	serverErrors := 0
	for _, c := range r.kinds {
		serverErrors += c.serverError
	}
	scope := "over the run"
	if !exact {
		scope = "(largest VmRSS sampled every 100 ms: the kernel did not let the peak be reset)"
	}
	verdict := "met"
	if peak > mutationPeakTarget {
		verdict = "MISSED"
	}
	fmt.Fprintf(w, "5xx: %d; 503 with Retry-After (shed): %d; no answer: %d; 4xx not the Error body: %d\n",
		serverErrors, r.shed, r.noAnswers, r.badBodyCount)
	fmt.Fprintf(w, "RSS before %s, peak %s %s, after %s: target ≤ %s %s\n", mib(before), mib(peak), scope, mib(after), mib(mutationPeakTarget), verdict)
	for title, samples := range map[string][]string{"5xx": r.serverErrors, "no answer": r.noAnswer, "4xx not the Error body": r.badBodies} {
		for _, s := range samples {
			fmt.Fprintf(w, "  %s: %s\n", title, s)
		}
	}
	var missed []string
	if serverErrors > 0 {
		missed = append(missed, fmt.Sprintf("%d answers were 5xx", serverErrors))
	}
	if r.noAnswers > 0 {
		missed = append(missed, fmt.Sprintf("%d requests got no answer", r.noAnswers))
	}
	if r.badBodyCount > 0 {
		missed = append(missed, fmt.Sprintf("%d refusals were not the Error body", r.badBodyCount))
	}
	if peak > mutationPeakTarget {
		missed = append(missed, "the peak RSS passed the target")
	}
	if len(missed) > 0 {
		return errors.New("mutation: " + strings.Join(missed, "; "))
	}
	return nil
}

func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return fmt.Sprintf("%s…(%d bytes)", s[:n], len(s))
}
