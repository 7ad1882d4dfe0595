package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/auth"
)

const e2mBatchPath = "/mgmt/openapi/5/events2metrics/events2metrics/v2/all/execute"

// e2mDeletes is an atomic E2M batch of n deletes (about 60 bytes each).
func e2mDeletes(n int) string {
	var b strings.Builder
	b.WriteString(`{"requests":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"delete":{"id":"5b0f4c1e-2a3d-4e5f-8a9b-%012d"}}`, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

// spanPolicies is a span-policy overwrite of n entries.
func spanPolicies(n int) string {
	var b strings.Builder
	b.WriteString(`{"policies":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"policy":{"name":"p%d","priority":"PRIORITY_TYPE_BLOCK"},"spanRules":{"actionRule":{"name":"GET /healthz","ruleTypeId":"RULE_TYPE_ID_IS"}}}`, i)
	}
	b.WriteString(`]}`)
	return b.String()
}

// countingReader counts the bytes read from it.
type countingReader struct {
	r    io.Reader
	read atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// TestOverBoundArraysEndTheRead: an array past its maxItems is refused with the validator's
// words as soon as the scan sees it, and the rest of the body is never read: a 15 MB batch of
// 250,000 deletes is refused after reading less than 1 MiB of it. One item over is named exactly
// ("got 101"); nothing is stored.
func TestOverBoundArraysEndTheRead(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		handler := env.Handler(t, env.DB, auth.NewAuthenticator(env.DB, nil))
		cases := []struct {
			name, path, method, body, want string
		}{
			{"250,000 E2M deletes", e2mBatchPath, "POST", e2mDeletes(250_000),
				"requests: must have at most 100 items (got more than "},
			{"101 E2M deletes", e2mBatchPath, "POST", e2mDeletes(101),
				"requests: must have at most 100 items (got 101)"},
			{"100,000 span policies", "/mgmt/openapi/4/dataplans/span-policies/v1", "PUT", spanPolicies(100_000),
				"policies: must have at most 200 items (got more than "},
		}
		for _, c := range cases {
			body := &countingReader{r: strings.NewReader(c.body)}
			req := httptest.NewRequest(c.method, c.path, body)
			req.Header.Set("Authorization", "Bearer "+env.RootKey)
			req.Header.Set("Content-Type", "application/json")
			req.ContentLength = int64(len(c.body))
			rec := httptest.NewRecorder()
			handler.ServeHTTP(rec, req)
			var answer struct {
				Code    int
				Message string
			}
			_ = json.Unmarshal(rec.Body.Bytes(), &answer)
			if rec.Code != http.StatusBadRequest || answer.Code != 400 || !strings.HasPrefix(answer.Message, c.want) {
				t.Errorf("%s: %d %s; want 400 %q…", c.name, rec.Code, rec.Body, c.want)
			}
			read := body.read.Load()
			if len(c.body) > 1<<20 && read > 1<<20 {
				t.Errorf("%s: read %d of the body's %d bytes before answering; want under 1 MiB", c.name, read, len(c.body))
			}
			t.Logf("%s: body %d bytes, read %d: %s", c.name, len(c.body), read, answer.Message)
		}
		res := env.Do(t, "GET", "/mgmt/openapi/4/dataplans/policies/v1?entityType=ENTITY_TYPE_SPANS", "Bearer "+env.RootKey, "", "")
		if strings.Contains(string(res.Body), `"p0"`) {
			t.Errorf("a refused overwrite stored policies: %s", res.Body)
		}
	})
}

// surrogatePlaceholder stands in a marshalled body for the raw escapes of a lone surrogate
// (a Go string cannot hold one).
const surrogatePlaceholder = "LONE-SURROGATE-HERE"

// TestEveryLoneSurrogateIsNamed reads api/openapi.yaml and, for every operation with a request
// body and every string property its body schema declares (at any depth, array items at index
// 0), sends its example (or minimal body) with that property holding a lone UTF-16 surrogate
// escape: a high one followed by a character, a high one at the end, a low one alone, a high one
// followed by another escape. Each must be answered 400 "<path>: must not contain a lone UTF-16
// surrogate (\udXXX)" on both engines, and nothing is stored (the body is refused before it is
// decoded).
func TestEveryLoneSurrogateIsNamed(t *testing.T) {
	doc := loadDocument(t)
	ops := operations(t, doc)
	variants := []struct{ raw, unit string }{
		{`a\ud800b`, `\ud800`},
		{`a\uDBFF`, `\udbff`},
		{`\udc00`, `\udc00`},
		{`x\ud83d\u0041`, `\ud83d`},
	}
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		before := snapshotDB(t, env)
		sent, operations := 0, map[string]bool{}
		for _, op := range ops {
			if op.Body == nil {
				continue
			}
			target := requestTarget(doc, op)
			base := op.Example
			if base == nil {
				base = doc.Minimal(op.Body)
			}
			for i, p := range doc.PropertyPaths(op.Body) {
				schema := doc.Resolve(p[len(p)-1].Schema)
				if typ, _ := schema["type"].(string); typ != "string" {
					continue
				}
				raw, err := json.Marshal(doc.SetPath(base, p, surrogatePlaceholder))
				if err != nil {
					t.Fatalf("%s: %v", op.ID, err)
				}
				v := variants[i%len(variants)]
				body := strings.Replace(string(raw), surrogatePlaceholder, v.raw, 1)
				want := p.String() + `: must not contain a lone UTF-16 surrogate (` + v.unit + `)`
				sent++
				operations[op.ID] = true
				res := env.Do(t, op.Method, target, authorization(env, op), "application/json", body)
				var got struct{ Message string }
				_ = json.Unmarshal(res.Body, &got)
				if res.Status != 400 || got.Message != want {
					t.Errorf("%s (%s %s), %s\n body %s\n answer %d %s\n want 400 %q",
						op.ID, op.Method, target, p.String(), short(body, 400), res.Status, short(string(res.Body), 300), want)
				}
			}
		}
		t.Logf("%d lone surrogates sent to %d operations", sent, len(operations))
		if sent < 100 {
			t.Errorf("only %d bodies were sent; reading the document went wrong", sent)
		}
		if diff := compareSnapshots(before, snapshotDB(t, env)); diff != "" {
			t.Errorf("refused bodies changed the database: %s", diff)
		}
		// A valid pair is one character, and is kept.
		res := env.JSON(t, "POST", rulesPath, env.RootKey, `{"name":"pair \ud83d\ude00","groups":[]}`)
		if res.Status != 200 {
			t.Fatalf("a surrogate pair: %d %s", res.Status, res.Body)
		}
		created := apitest.Decode[struct{ ID string }](t, res)
		res = env.Do(t, "GET", rulesPath+"/"+created.ID, "Bearer "+env.RootKey, "", "")
		if !strings.Contains(string(res.Body), `"pair 😀"`) {
			t.Errorf("a surrogate pair is stored as %s", res.Body)
		}
	})
}

// quotaRules is a quota rule set create of n rules with distinct entity types.
func quotaRules(n int) string {
	var b strings.Builder
	b.WriteString(`{"ruleSet":{"rules":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"entityType":"e%d","allocation":0,"allocationType":"QUOTA_ALLOCATION_TYPE_PERCENTAGE","enabled":true,"canOverflow":false}`, i)
	}
	b.WriteString(`]}}`)
	return b.String()
}

// TestQuotaRuleSetsAreBounded: a rule set takes at most 1000 rules (docs/limits.md); one more,
// or 120,000 (14 MB), is a 400 naming the bound, and no set is stored; 1000 are accepted.
func TestQuotaRuleSetsAreBounded(t *testing.T) {
	const path = "/mgmt/openapi/4/dataplan/quota-rules/v1"
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		apitest.ExpectError(t, env.JSON(t, "POST", path, env.RootKey, quotaRules(120_000)), 400,
			"ruleSet.rules: must have at most 1000 items (got more than ")
		apitest.ExpectError(t, env.JSON(t, "POST", path, env.RootKey, quotaRules(1001)), 400,
			"ruleSet.rules: must have at most 1000 items (got 1001)")
		if res := env.Do(t, "GET", path, "Bearer "+env.RootKey, "", ""); res.Status == 200 && strings.Contains(string(res.Body), `"e0"`) {
			t.Fatalf("a refused set was stored: %s", short(string(res.Body), 200))
		}
		if res := env.JSON(t, "POST", path, env.RootKey, quotaRules(1000)); res.Status != 200 {
			t.Fatalf("1000 rules: %d %s", res.Status, short(string(res.Body), 300))
		}
		apitest.ExpectError(t, env.JSON(t, "PUT", "/mgmt/openapi/5/dataplan/quota-rules/v1", env.RootKey, quotaRules(1001)), 400,
			"ruleSet.rules: must have at most 1000 items (got 1001)")
	})
}
