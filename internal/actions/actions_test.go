package actions_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

const (
	actionsPath = "/mgmt/openapi/latest/actions/actions/v2"
	batchPath   = "/mgmt/openapi/latest/actions/batch/v2"
	orderPath   = "/mgmt/openapi/latest/actions/order/v2"
)

type action struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	URL       string `json:"url"`
	IsPrivate bool   `json:"isPrivate"`
	IsHidden  bool   `json:"isHidden"`
	CreatedBy string `json:"createdBy"`
}

func create(t *testing.T, env *apitest.Env, key, body string) action {
	t.Helper()
	res := env.JSON(t, http.MethodPost, actionsPath, key, body)
	if res.Status != http.StatusOK {
		t.Fatalf("create %s: %d %s", body, res.Status, res.Body)
	}
	a := apitest.Decode[struct{ Action action }](t, res).Action
	if a.ID == "" || a.CreatedBy == "" {
		t.Fatalf("create answered no id or creator: %s", res.Body)
	}
	return a
}

func names(t *testing.T, env *apitest.Env, key string) string {
	t.Helper()
	res := env.JSON(t, http.MethodGet, actionsPath, key, "")
	if res.Status != http.StatusOK {
		t.Fatalf("list: %d %s", res.Status, res.Body)
	}
	var out []string
	for _, a := range apitest.Decode[struct{ Actions []action }](t, res).Actions {
		out = append(out, a.Name)
	}
	return strings.Join(out, ",")
}

// TestActionLifecycle: an action written as the vendor's provider writes it is stored, read,
// listed, replaced (id, creator and place kept) and deleted; another team sees none of it.
func TestActionLifecycle(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		a := create(t, env, env.RootKey, `{"name":"google search action","url":"https://www.google.com/search?q={{$p.selected_value}}","isPrivate":false,"sourceType":"SOURCE_TYPE_LOG","applicationNames":["app"],"subsystemNames":["sub"]}`)
		got := apitest.Decode[struct{ Action action }](t, env.JSON(t, http.MethodGet, actionsPath+"/"+a.ID, env.RootKey, "")).Action
		if got != a {
			t.Fatalf("get %+v, created %+v", got, a)
		}
		create(t, env, env.RootKey, `{"name":"second","url":"https://example.com/{{$d.kubernetes.pod_name}}?env={{$p.env}}","urlFields":[{"name":"env","required":true}]}`)
		res := env.JSON(t, http.MethodPut, actionsPath, env.RootKey,
			`{"action":{"id":"`+a.ID+`","name":"bing search action","url":"https://www.bing.com/search?q={{$p.selected_value}}","isHidden":true,"createdBy":"someone else"}}`)
		if res.Status != http.StatusOK {
			t.Fatalf("replace: %d %s", res.Status, res.Body)
		}
		r := apitest.Decode[struct{ Action action }](t, res).Action
		if r.ID != a.ID || r.CreatedBy != a.CreatedBy || r.Name != "bing search action" || !r.IsHidden {
			t.Fatalf("replace answered %+v", r)
		}
		if got := names(t, env, env.RootKey); got != "bing search action,second" {
			t.Fatalf("list after replace: %s", got)
		}
		_, other := env.MustTeam(t, "other")
		if got := names(t, env, other); got != "" {
			t.Fatalf("another team lists %s", got)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, actionsPath+"/"+a.ID, other, ""), http.StatusNotFound, "no action")
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, actionsPath+"/"+a.ID, other, ""), http.StatusNotFound, "no action")
		if res := env.JSON(t, http.MethodDelete, actionsPath+"/"+a.ID, env.RootKey, ""); res.Status != http.StatusOK || string(res.Body) != "{}" {
			t.Fatalf("delete: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, actionsPath+"/"+a.ID, env.RootKey, ""), http.StatusNotFound, a.ID)
		if got := names(t, env, env.RootKey); got != "second" {
			t.Fatalf("list after delete: %s", got)
		}
	})
}

// TestPlaceholdersAreChecked: each malformed URL or placeholder is refused with a message naming
// the field and the rule, and nothing is stored.
func TestPlaceholdersAreChecked(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		for _, c := range []struct{ body, want string }{
			{`{"name":"x","url":"ftp://example.com/{{$p.selected_value}}"}`, "url: must start with http:// or https://"},
			{`{"name":"x","url":"https://example.com/{{$p.selected_value"}`, "is not closed"},
			{`{"name":"x","url":"https://example.com/$p.selected_value}}"}`, "closes no placeholder"},
			{`{"name":"x","url":"https://example.com/{{$x.value}}"}`, "placeholder {{$x.value}} must be"},
			{`{"name":"x","url":"https://example.com/{{selected_value}}"}`, "placeholder {{selected_value}} must be"},
			{`{"name":"x","url":"https://example.com/{{$p.region}}"}`, `names parameter "region"`},
			{`{"name":"x","url":"https://example.com/","urlFields":[{"name":"a","required":true},{"name":"a","required":false}]}`, `urlFields[1].name: "a" is declared twice`},
			{`{"name":"x","url":"https:///nohost"}`, "url: not a URL with a host"},
			{`{"name":"   ","url":"https://example.com/"}`, "name: required"},
			{`{"name":"x","url":"https://example.com/","applicationNames":["a","a"]}`, `applicationNames[1]: "a" is listed twice`},
			{`{"name":"x"}`, "url: required"},
		} {
			apitest.ExpectError(t, env.JSON(t, http.MethodPost, actionsPath, env.RootKey, c.body), http.StatusBadRequest, c.want)
		}
		if got := names(t, env, env.RootKey); got != "" {
			t.Fatalf("refused actions were stored: %s", got)
		}
		// every scope the template language has is accepted
		create(t, env, env.RootKey, `{"name":"scopes","url":"https://example.com/{{ $p.selected_value }}/{{$d.a.b}}/{{$l.applicationname}}/{{$m.timestamp}}"}`)
	})
}

// TestOrderAndPrivacy: shared actions list before private ones, each group in creation order
// until the order operation changes it; the actions left out keep their relative order after
// the named ones; unknown ids, ids of the other group and repeated positions are refused.
func TestOrderAndPrivacy(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		ids := map[string]string{}
		for _, c := range []struct {
			name    string
			private bool
		}{{"s1", false}, {"p1", true}, {"s2", false}, {"s3", false}, {"p2", true}} {
			priv := "false"
			if c.private {
				priv = "true"
			}
			ids[c.name] = create(t, env, env.RootKey, `{"name":"`+c.name+`","url":"https://example.com/","isPrivate":`+priv+`}`).ID
		}
		if got := names(t, env, env.RootKey); got != "s1,s2,s3,p1,p2" {
			t.Fatalf("initial order %s", got)
		}
		res := env.JSON(t, http.MethodPost, orderPath, env.RootKey,
			`{"sharedActionsOrder":{"`+ids["s3"]+`":0,"`+ids["s1"]+`":5},"privateActionsOrder":{"`+ids["p2"]+`":1}}`)
		if res.Status != http.StatusOK || string(res.Body) != "{}" {
			t.Fatalf("order: %d %s", res.Status, res.Body)
		}
		if got := names(t, env, env.RootKey); got != "s3,s1,s2,p2,p1" {
			t.Fatalf("order after the order operation %s", got)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, orderPath, env.RootKey, `{"sharedActionsOrder":{"`+ids["p1"]+`":0}}`),
			http.StatusBadRequest, "sharedActionsOrder", "is not a shared action")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, orderPath, env.RootKey, `{"sharedActionsOrder":{"`+ids["s1"]+`":1,"`+ids["s2"]+`":1}}`),
			http.StatusBadRequest, "positions must be distinct")
		// a replace into the other group puts the action last there
		res = env.JSON(t, http.MethodPut, actionsPath, env.RootKey, `{"action":{"id":"`+ids["s3"]+`","name":"s3","url":"https://example.com/","isPrivate":true}}`)
		if res.Status != http.StatusOK {
			t.Fatalf("replace: %d %s", res.Status, res.Body)
		}
		if got := names(t, env, env.RootKey); got != "s1,s2,p2,p1,s3" {
			t.Fatalf("order after a move %s", got)
		}
	})
}

// TestBatchIsAtomic: a batch whose last request fails changes nothing and names the request; a
// good batch creates, replaces and deletes in order and answers one response each.
func TestBatchIsAtomic(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		keep := create(t, env, env.RootKey, `{"name":"keep","url":"https://example.com/"}`)
		gone := create(t, env, env.RootKey, `{"name":"gone","url":"https://example.com/"}`)
		bad := `{"requests":[{"create":{"name":"new","url":"https://example.com/"}},{"delete":{"id":"` + gone.ID + `"}},` +
			`{"replace":{"action":{"id":"` + keep.ID + `","name":"renamed","url":"https://example.com/{{$q.x}}"}}}]}`
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, batchPath, env.RootKey, bad), http.StatusBadRequest, "requests[2].replace.action.url: placeholder")
		if got := names(t, env, env.RootKey); got != "keep,gone" {
			t.Fatalf("a failed batch changed the actions: %s", got)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, batchPath, env.RootKey, `{"requests":[{}]}`), http.StatusBadRequest, "requests[0]: must hold exactly one")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, batchPath, env.RootKey,
			`{"requests":[{"delete":{"id":"00000000-0000-4000-8000-000000000000"}}]}`), http.StatusNotFound, "requests[0].delete.id")
		good := strings.Replace(bad, "{{$q.x}}", "{{$p.selected_value}}", 1)
		res := env.JSON(t, http.MethodPost, batchPath, env.RootKey, good)
		if res.Status != http.StatusOK {
			t.Fatalf("batch: %d %s", res.Status, res.Body)
		}
		answers := apitest.Decode[struct {
			MatchingResponses []map[string]any
		}](t, res).MatchingResponses
		if len(answers) != 3 || apitest.At(answers[0], "create", "action", "name") != "new" || answers[1]["delete"] == nil ||
			apitest.At(answers[2], "replace", "action", "name") != "renamed" {
			t.Fatalf("batch answered %s", res.Body)
		}
		if got := names(t, env, env.RootKey); got != "renamed,new" {
			t.Fatalf("after the batch: %s", got)
		}
	})
}

// TestActionPermissions: reading needs team-actions:ReadConfig, changing team-actions:UpdateConfig.
func TestActionPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		reader := env.MustKey(t, env.RootKey, "team-actions:ReadConfig")
		if res := env.JSON(t, http.MethodGet, actionsPath, reader, ""); res.Status != http.StatusOK {
			t.Fatalf("list with ReadConfig: %d %s", res.Status, res.Body)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, actionsPath, reader, `{"name":"x","url":"https://example.com/"}`), http.StatusForbidden)
	})
}

// TestActionChangesAreAudited: each change is one audit record of the team naming the operation
// and the action; a refused change writes none.
func TestActionChangesAreAudited(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		a := create(t, env, env.RootKey, `{"name":"audited","url":"https://example.com/"}`)
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, actionsPath, env.RootKey, `{"name":"x","url":"nope"}`), http.StatusBadRequest)
		if res := env.JSON(t, http.MethodDelete, actionsPath+"/"+a.ID, env.RootKey, ""); res.Status != http.StatusOK {
			t.Fatalf("delete: %d %s", res.Status, res.Body)
		}
		page, err := env.Client(t, apitest.OperatorKey).AdminListAuditRecords(context.Background(), oas.AdminListAuditRecordsParams{TeamID: 1})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range page.Records {
			if slices.Contains(r.ResourceIds, a.ID) {
				got = append(got, r.Operation)
			}
		}
		if strings.Join(got, ",") != "DeleteAction,CreateAction" {
			t.Fatalf("audit records naming the action: %v", got)
		}
		for _, r := range page.Records {
			if r.Operation == "CreateAction" && !slices.Contains(r.ResourceIds, a.ID) {
				t.Fatalf("a refused create was audited: %+v", r)
			}
		}
	})
}
