package blackbox

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
)

// TestAuthorizationMatrix reads api/openapi.yaml and sends every operation it declares, built
// from the document (path parameters from the fixture registry, required query parameters and the
// body's example or minimal instance), with every credential that must not work:
//
//   - team operations: no key, an unknown key, a deactivated and a deleted key of team A, the
//     operator key (401 each); a key of team A holding every permission of the catalog but the
//     operation's x-permission, a full-access key whose access policy denies it, and a send-data
//     key (403 each; ingestion takes the send-data key);
//   - another team's ids: with the ids of team A's resources in its path, a full-access key of
//     team B must get a 404; an operation with no such path parameter is sent by another team's
//     full-access key with team A's ids wherever the body or query names ids, and may be answered
//     as that team's own request;
//   - operator operations: no key, an unknown key, a deactivated or deleted team key and the
//     full-access keys of both teams (401 each).
//
// Every refusal must be the {code, message} body with code equal to the status. No answer to
// team B may carry a name or id of team A's resources, and every read of team A (each GET, its
// path naming team A's fixtures) must answer exactly the same before and after all the probes
// (but for the reads whose answer moves with the clock, which are named in the summary).
func TestAuthorizationMatrix(t *testing.T) {
	doc := loadDocument(t)
	ops := operations(t, doc)
	if len(ops) < 100 {
		t.Fatalf("the document declares %d operations; reading it went wrong", len(ops))
	}
	byID := map[string]operation{}
	for _, op := range ops {
		byID[op.ID] = op
	}
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		started := time.Now()
		teamA, keyA := env.MustTeam(t, "matrix team A")
		_, keyB := env.MustTeam(t, "matrix team B (ids)")
		_, keyB2 := env.MustTeam(t, "matrix team B (bodies)")
		f := &fixtureRun{t: t, env: env, doc: doc, ops: byID, key: keyA, teamID: teamA, values: map[string]string{},
			ids: []string{keyA}} // team A's key value must never reach another team either

		// Every path parameter has a fixture, before anything else is checked.
		args := map[string]map[string]string{}
		teamOwned := map[string]bool{}
		var missing []string
		for _, op := range ops {
			a, owned, m := f.pathArguments(op)
			args[op.ID], teamOwned[op.ID] = a, owned
			missing = append(missing, m...)
		}
		if len(missing) > 0 {
			t.Fatalf("operations whose path parameters the matrix cannot fill:\n%s", strings.Join(missing, "\n"))
		}
		keys := makeProbeKeys(t, env, keyA, ops)
		// Values that move with the clock (a duration until now, usage over the last days) cannot
		// be compared: two snapshots two days apart find them, and they are left out.
		first := snapshotTeam(t, env, f, ops, args, teamOwned)
		env.Clock.Advance(48 * time.Hour)
		before := snapshotTeam(t, env, f, ops, args, teamOwned)
		clockBound := map[string]bool{}
		for read, values := range before {
			for _, path := range differingPaths(first[read], values) {
				clockBound[read+" "+path] = true
			}
		}
		if len(before) < 40 {
			t.Fatalf("only %d reads of team A were taken", len(before))
		}

		m := &matrix{env: env, doc: doc, f: f, keys: keys, keyB: keyB, keyB2: keyB2,
			tally: map[string]int{}, crossStatuses: map[int]int{}}
		t.Run("probes", func(t *testing.T) {
			for _, op := range ops {
				t.Run(op.ID, func(t *testing.T) {
					t.Parallel()
					m.run(t, op, args[op.ID], teamOwned[op.ID])
				})
			}
		})

		after := snapshotTeam(t, env, f, ops, args, teamOwned)
		changed := 0
		for _, read := range sortedKeys(before) {
			var differing []string
			for _, path := range differingPaths(before[read], after[read]) {
				if !clockBound[read+" "+path] {
					differing = append(differing, fmt.Sprintf("%s: %.200q → %.200q", path, before[read][path], after[read][path]))
				}
			}
			if len(differing) > 0 {
				changed++
				t.Errorf("team A's read %s answered differently after the probes:\n %s", read, strings.Join(differing, "\n "))
			}
		}
		total := 0
		var kinds []string
		for _, k := range sortedKeys(m.tally) {
			total += m.tally[k]
			kinds = append(kinds, fmt.Sprintf("%s %d", k, m.tally[k]))
		}
		t.Logf("%s: authorization matrix: %d operations × probes = %d requests (%s); "+
			"%d reads of team A compared, %d changed (%d values left out, moving with the clock: %v); "+
			"team B's requests with team A's ids in query or body answered %v; %d leaks, %d wrong answers; %s",
			env.Engine, len(ops), total, strings.Join(kinds, ", "),
			len(before), changed, len(clockBound), clockBoundByRead(clockBound),
			m.crossStatuses, m.leaks, m.wrong, time.Since(started).Round(time.Millisecond))
	})
}

// probeKeys are team A's keys that must not work, made once per engine.
type probeKeys struct {
	deactivated, deleted, sendData string
	// without holds, per permission, a key with every permission of the catalog but that one;
	// denied a full-access key whose access policy denies it.
	without, denied map[string]string
}

func makeProbeKeys(t *testing.T, env *apitest.Env, keyA string, ops []operation) probeKeys {
	t.Helper()
	create := func(body any) (id, value string) {
		t.Helper()
		res := env.JSON(t, http.MethodPost, "/mgmt/openapi/4/aaa/api-keys/v3", keyA, apitest.JSONOf(t, body))
		out := apitest.Decode[struct{ KeyID, Value string }](t, res)
		return out.KeyID, out.Value
	}
	full := map[string]any{"presets": []string{auth.FullAccess}}
	k := probeKeys{without: map[string]string{}, denied: map[string]string{}}
	var id string
	id, k.deactivated = create(map[string]any{"name": "deactivated", "keyPermissions": full})
	res := env.JSON(t, http.MethodPut, "/mgmt/openapi/5/aaa/api-keys/v3/"+id, keyA, `{"isActive":false}`)
	if res.Status != http.StatusOK {
		t.Fatalf("deactivate: %d %s", res.Status, res.Body)
	}
	id, k.deleted = create(map[string]any{"name": "deleted", "keyPermissions": full})
	if res := env.JSON(t, http.MethodDelete, "/mgmt/openapi/5/aaa/api-keys/v3/"+id, keyA, ""); res.Status != http.StatusOK {
		t.Fatalf("delete: %d %s", res.Status, res.Body)
	}
	_, k.sendData = create(map[string]any{"name": "send data", "keyPermissions": map[string]any{"presets": []string{auth.SendData}}})
	var all []string
	for _, p := range auth.Permissions() {
		all = append(all, p.Name)
	}
	for _, op := range ops {
		p := op.Permission
		if op.Operator || k.without[p] != "" {
			continue
		}
		if !slices.Contains(all, p) {
			t.Fatalf("%s: x-permission %q is not in internal/auth's catalog", op, p)
		}
		others := slices.DeleteFunc(slices.Clone(all), func(q string) bool { return q == p })
		_, k.without[p] = create(map[string]any{"name": "without " + p, "keyPermissions": map[string]any{"permissions": others}})
		policy := fmt.Sprintf(`{"version":"2025-01-01","default":{"permissions":{%q:"deny"}},"rules":[]}`, p)
		_, k.denied[p] = create(map[string]any{"name": "denied " + p, "keyPermissions": full, "accessPolicy": policy})
	}
	return k
}

// matrix runs the probes of one engine; its counters are shared by the parallel subtests.
type matrix struct {
	env         *apitest.Env
	doc         *document
	f           *fixtureRun
	keys        probeKeys
	keyB, keyB2 string

	mu    sync.Mutex
	tally map[string]int // requests by kind of probe
	// crossStatuses counts the answers to team B's requests carrying team A's ids in a query or
	// body, by status.
	crossStatuses map[int]int
	leaks         int
	wrong         int
}

func (m *matrix) count(kind string, wrong bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tally[kind]++
	if wrong {
		m.wrong++
	}
}

// run sends every probe of op.
func (m *matrix) run(t *testing.T, op operation, args map[string]string, teamOwned bool) {
	path := fillPath(op.Path, args)
	query := m.query(op, false)
	body := m.body(op, false)
	expect := func(kind, authorization string, status int) {
		t.Helper()
		res := m.env.Do(t, op.Method, withQuery(path, query), authorization, contentType(op), body)
		problem := ""
		if res.Status != status {
			problem = fmt.Sprintf("status %d, want %d", res.Status, status)
		} else if p := errorBodyProblem(res); p != "" {
			problem = p
		}
		m.count(kind, problem != "")
		if problem != "" {
			t.Errorf("%s, %s: %s %s: %s\n answer %d %.400s", op, kind, op.Method, withQuery(path, query), problem, res.Status, res.Body)
		}
	}
	expect("no key", "", http.StatusUnauthorized)
	expect("unknown key", "Bearer mgmt_qx7UnknownKeyValue0123456789abcdefghijklmno", http.StatusUnauthorized)
	expect("deactivated key", "Bearer "+m.keys.deactivated, http.StatusUnauthorized)
	expect("deleted key", "Bearer "+m.keys.deleted, http.StatusUnauthorized)
	if op.Operator {
		expect("team key on operator operation", "Bearer "+m.f.key, http.StatusUnauthorized)
		expect("other team's key on operator operation", "Bearer "+m.keyB, http.StatusUnauthorized)
		return
	}
	switch {
	case !op.OperatorToo:
		expect("operator key", "Bearer "+apitest.OperatorKey, http.StatusUnauthorized)
	case op.Method == http.MethodGet:
		// The teams operations take the operator key too (its writes would change team A).
		res := m.env.Do(t, op.Method, withQuery(path, query), "Bearer "+apitest.OperatorKey, contentType(op), body)
		m.count("operator key on an operation that takes it", res.Status != http.StatusOK)
		if res.Status != http.StatusOK {
			t.Errorf("%s, the operator key: %s %s: status %d, want 200\n answer %.400s", op, op.Method, withQuery(path, query), res.Status, res.Body)
		}
	}
	expect("permission missing", "Bearer "+m.keys.without[op.Permission], http.StatusForbidden)
	expect("access policy deny", "Bearer "+m.keys.denied[op.Permission], http.StatusForbidden)
	if op.Permission != auth.IngestPermission {
		expect("send-data key", "Bearer "+m.keys.sendData, http.StatusForbidden)
	}

	if teamOwned {
		// Team B holds nothing: team A's ids name nothing of its own.
		res := m.env.Do(t, op.Method, withQuery(path, query), "Bearer "+m.keyB, contentType(op), body)
		problem := ""
		if res.Status != http.StatusNotFound {
			problem = fmt.Sprintf("status %d, want 404", res.Status)
		} else if p := errorBodyProblem(res); p != "" {
			problem = p
		}
		m.count("other team's ids in the path", problem != "")
		if problem != "" {
			t.Errorf("%s, team B with team A's ids: %s %s: %s\n body %.300s\n answer %d %.400s", op, op.Method, withQuery(path, query),
				problem, body, res.Status, res.Body)
		}
		m.checkLeak(t, op, withQuery(path, query)+body, res)
		return
	}
	if op.OperatorToo && op.IsWrite() {
		// Team B creating a team of its own is the deployment's change, not team A's (and the
		// operator's list of teams, one of the reads compared, would show it).
		return
	}
	crossQuery, crossBody := m.query(op, true), m.body(op, true)
	res := m.env.Do(t, op.Method, withQuery(path, crossQuery), "Bearer "+m.keyB2, contentType(op), crossBody)
	problem := ""
	if res.Status >= 500 {
		problem = fmt.Sprintf("status %d", res.Status)
	} else if res.Status >= 400 {
		problem = errorBodyProblem(res)
	}
	m.count("other team's ids in query or body", problem != "")
	m.mu.Lock()
	m.crossStatuses[res.Status]++
	m.mu.Unlock()
	if problem != "" {
		t.Errorf("%s, team B with team A's ids: %s %s: %s\n body %.300s\n answer %d %.400s", op, op.Method, withQuery(path, crossQuery),
			problem, crossBody, res.Status, res.Body)
	}
	m.checkLeak(t, op, withQuery(path, crossQuery)+crossBody, res)
}

// checkLeak fails when an answer to team B carries leakMarker or an id of team A's fixtures
// that its request did not (a 404 may name the id it was given).
func (m *matrix) checkLeak(t *testing.T, op operation, request string, res apitest.Response) {
	t.Helper()
	text := string(res.Body)
	found := ""
	if strings.Contains(text, leakMarker) {
		found = leakMarker
	}
	m.f.mu.Lock()
	for _, id := range m.f.ids {
		// Short ids (integers) are numbered per team or globally and say nothing alone.
		if len(id) >= 16 && strings.Contains(text, id) && !strings.Contains(request, id) {
			found = id
		}
	}
	m.f.mu.Unlock()
	if found != "" {
		m.mu.Lock()
		m.leaks++
		m.mu.Unlock()
		t.Errorf("%s: LEAK: the answer to team B carries %q of team A: %d %.600s", op, found, res.Status, res.Body)
	}
}

// query builds the required query parameters of op, each with its minimal value; with crossTeam,
// a parameter that names ids gets team A's id of the operation's area.
func (m *matrix) query(op operation, crossTeam bool) url.Values {
	q := url.Values{}
	for _, p := range op.Params {
		if p.In != "query" {
			continue
		}
		if crossTeam && idName.MatchString(p.Name) {
			if id := m.areaID(op); id != "" {
				q.Add(p.Name, id)
				continue
			}
		}
		if !p.Required {
			continue
		}
		m.doc.AddMinimal(q, p)
	}
	return q
}

// idName matches the names of properties and parameters that hold ids.
var idName = regexp.MustCompile(`^(id|ids)$|(_id|_ids|Id|Ids)$`)

// placeholderIDs stand, in the document's examples, for the id of an existing resource.
var placeholderIDs = []string{"00000000-0000-4000-8000-000000000000", "000000000000000000000"}

// body is the JSON body of op: its example, or the minimal instance of its schema; with
// crossTeam, every placeholder id in it is team A's id of the operation's area.
func (m *matrix) body(op operation, crossTeam bool) string {
	if op.Body == nil {
		return ""
	}
	v := op.Example
	if v == nil {
		v = m.doc.Minimal(op.Body)
	}
	if crossTeam {
		if id := m.areaID(op); id != "" {
			v = replacePlaceholders(v, id)
		}
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func replacePlaceholders(v any, id string) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = replacePlaceholders(e, id)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = replacePlaceholders(e, id)
		}
		return out
	case string:
		if slices.Contains(placeholderIDs, x) {
			return id
		}
	}
	return v
}

// areaID is team A's id of the fixture whose prefix shares the most with op's path (at least the
// area, its first segment), or "".
func (m *matrix) areaID(op operation) string {
	path := versionless(op.Path)
	best, bestLen := fixture{}, 0
	for _, x := range fixtures {
		if x.shared || x.prefix == "" {
			continue
		}
		n := sharedPrefixSegments(path, x.prefix)
		if n >= 2 && n > bestLen {
			best, bestLen = x, n
		}
	}
	if bestLen == 0 {
		return ""
	}
	m.f.mu.Lock()
	defer m.f.mu.Unlock()
	return m.f.of(best)
}

func sharedPrefixSegments(a, b string) int {
	as, bs := strings.Split(a, "/"), strings.Split(strings.TrimSuffix(b, "/"), "/")
	n := 0
	for n < len(as) && n < len(bs) && as[n] == bs[n] {
		n++
	}
	return n
}

func withQuery(path string, q url.Values) string {
	if len(q) == 0 {
		return path
	}
	return path + "?" + q.Encode()
}

func contentType(op operation) string {
	if op.Body != nil {
		return "application/json"
	}
	return ""
}

// snapshotTeam reads, as team A, every GET of the document with its path naming team A's
// fixtures (operator reads with the operator key and team A's id), and returns each answer by
// operation. A read whose path names team A's resources must answer 200: otherwise the 404 that
// team B gets would prove nothing.
func snapshotTeam(t *testing.T, env *apitest.Env, f *fixtureRun, ops []operation, args map[string]map[string]string,
	teamOwned map[string]bool) map[string]map[string]string {
	t.Helper()
	m := &matrix{env: env, doc: f.doc, f: f}
	out := map[string]map[string]string{}
	for _, op := range ops {
		if op.Method != http.MethodGet {
			continue
		}
		key := "Bearer " + f.key
		if op.Operator {
			key = "Bearer " + apitest.OperatorKey
		}
		path := withQuery(fillPath(op.Path, args[op.ID]), m.query(op, false))
		res := env.Do(t, op.Method, path, key, "", "")
		if res.Status >= 500 || (teamOwned[op.ID] && res.Status != http.StatusOK) {
			t.Fatalf("%s: team A's own read %s: %d %.400s", op, path, res.Status, res.Body)
		}
		out[op.ID] = flatten(res)
	}
	return out
}

// errorBodyProblem says what is wrong with an error answer, or "" when it is exactly
// {code, message} with code equal to the status, a non-empty message and a JSON Content-Type.
func errorBodyProblem(res apitest.Response) string {
	var body map[string]json.RawMessage
	if err := json.Unmarshal(res.Body, &body); err != nil {
		return "the body is not a JSON object: " + err.Error()
	}
	if len(body) != 2 || body["code"] == nil || body["message"] == nil {
		return "the body does not have exactly the properties code and message"
	}
	var code int
	if err := json.Unmarshal(body["code"], &code); err != nil || code != res.Status {
		return fmt.Sprintf("code %s is not the status %d", body["code"], res.Status)
	}
	var message string
	if err := json.Unmarshal(body["message"], &message); err != nil || strings.TrimSpace(message) == "" {
		return "the message is not a non-empty string"
	}
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		return fmt.Sprintf("Content-Type %q", ct)
	}
	return ""
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// flatten turns an answer into its values by JSON path ("cases[0].status"), with the status
// under "status" (a body that is not JSON is one value, "body").
func flatten(res apitest.Response) map[string]string {
	out := map[string]string{"status": fmt.Sprint(res.Status)}
	var v any
	if json.Unmarshal(res.Body, &v) != nil {
		out["body"] = string(res.Body)
		return out
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			out[path] = "{}"
			for k, e := range x {
				walk(path+"."+k, e)
			}
		case []any:
			out[path] = fmt.Sprintf("[%d]", len(x))
			for i, e := range x {
				walk(fmt.Sprintf("%s[%d]", path, i), e)
			}
		default:
			b, _ := json.Marshal(x)
			out[path] = string(b)
		}
	}
	walk("body", v)
	return out
}

// differingPaths lists the paths whose values differ between two flattened answers, or that only
// one of them has.
func differingPaths(a, b map[string]string) []string {
	var out []string
	for path, v := range a {
		if w, ok := b[path]; !ok || w != v {
			out = append(out, path)
		}
	}
	for path := range b {
		if _, ok := a[path]; !ok {
			out = append(out, path)
		}
	}
	sort.Strings(out)
	return out
}

// clockBoundByRead words the values left out by read: "GetCase 1, ListE2MLabelsCardinality 30".
func clockBoundByRead(clockBound map[string]bool) string {
	counts := map[string]int{}
	for key := range clockBound {
		read, _, _ := strings.Cut(key, " ")
		counts[read]++
	}
	var parts []string
	for _, read := range sortedKeys(counts) {
		parts = append(parts, fmt.Sprintf("%s %d", read, counts[read]))
	}
	return strings.Join(parts, ", ")
}
