package extensions_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/extensions"
)

const (
	base         = "/mgmt/openapi/3/integrations/extensions/v1"
	allPath      = base + "/all"
	deployedPath = base + "/deployed"
)

type counts map[string]int64

type listDoc struct {
	Extensions []struct {
		ID, Name, Image, DarkModeImage string
		IsHidden                       bool
		Integrations, Keywords         []string
		Deprecation                    *struct {
			Reason                string
			ReplacementExtensions []string
		}
		Revisions []struct {
			Version, Description, Excerpt string
			Labels                        []string
			IntegrationDetails            []struct{ Name, Link string }
			Summary                       struct {
				IsNew      bool
				ItemCounts counts
			}
		}
	}
}

func (l listDoc) ids() []string {
	out := []string{}
	for _, e := range l.Extensions {
		out = append(out, e.ID)
	}
	return out
}

type binaryDoc struct{ Type, FileName, Data string }

type itemDoc struct {
	ID, Name, StableID, UniqueID, ExtendedInternalID string
	TargetDomain, PermissionResource                 string
	IsMandatory                                      bool
	Data                                             json.RawMessage
	Binaries                                         []binaryDoc
}

type revisionDoc struct {
	Version               string
	IsTesting             bool
	Binaries              []struct{ Type, Data string }
	Items                 []itemDoc
	PermissionDeniedItems []itemDoc
}

type extensionDoc struct {
	ID                        string
	Changelog                 []struct{ Version, DescriptionMd string }
	Revisions                 []revisionDoc
	PermissionDeniedRevisions []revisionDoc
}

func versions(rs []revisionDoc) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Version)
	}
	return out
}

func itemIDs(items []itemDoc) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

func revisionByVersion(t *testing.T, rs []revisionDoc, v string) revisionDoc {
	t.Helper()
	for _, r := range rs {
		if r.Version == v {
			return r
		}
	}
	t.Fatalf("no revision %s among %v", v, versions(rs))
	return revisionDoc{}
}

func itemByID(t *testing.T, r revisionDoc, id string) itemDoc {
	t.Helper()
	for _, it := range append(slices.Clone(r.Items), r.PermissionDeniedItems...) {
		if it.ID == id {
			return it
		}
	}
	t.Fatalf("no item %s in revision %s", id, r.Version)
	return itemDoc{}
}

func list(t *testing.T, env *apitest.Env, key, body string) listDoc {
	t.Helper()
	return apitest.Decode[listDoc](t, env.JSON(t, http.MethodPost, allPath, key, body))
}

func getExtension(t *testing.T, env *apitest.Env, key, idAndQuery string) extensionDoc {
	t.Helper()
	return apitest.Decode[extensionDoc](t, env.JSON(t, http.MethodGet, base+"/"+idAndQuery, key, ""))
}

// operatorCatalog is the built-in catalog plus testdata/catalog (acme-widgets, deprecated in
// favour of acme-gadgets, which is hidden).
func operatorCatalog(t *testing.T) *extensions.Catalog {
	t.Helper()
	c, err := extensions.LoadCatalog("testdata/catalog")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestListExtensions(t *testing.T) {
	apitest.EnginesWith(t, apitest.Options{Extensions: operatorCatalog(t)}, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "t")

		// Without a body and with {} alike: hidden extensions are left out.
		for _, body := range []string{"", "{}", `{"filter":{}}`, `{"filter":{"integrations":[]}}`} {
			res := env.Do(t, http.MethodPost, allPath, "Bearer "+key, "application/json", body)
			l := apitest.Decode[listDoc](t, res)
			ids := l.ids()
			if !slices.Contains(ids, "kubernetes") || !slices.Contains(ids, "acme-widgets") || slices.Contains(ids, "acme-gadgets") {
				t.Fatalf("body %q: ids %v, want kubernetes and acme-widgets but not the hidden acme-gadgets", body, ids)
			}
			if !sort.SliceIsSorted(l.Extensions, func(i, j int) bool {
				a, b := l.Extensions[i], l.Extensions[j]
				return a.Name < b.Name || a.Name == b.Name && a.ID < b.ID
			}) {
				t.Fatalf("not ordered by name, then id: %v", ids)
			}
		}
		// No body and no Content-Type at all.
		if ids := apitest.Decode[listDoc](t, env.Do(t, http.MethodPost, allPath, "Bearer "+key, "", "")).ids(); !slices.Contains(ids, "kubernetes") {
			t.Fatalf("no body: %v", ids)
		}
		withHidden := list(t, env, key, `{"includeHiddenExtensions":true}`).ids()
		if !slices.Contains(withHidden, "acme-gadgets") {
			t.Fatalf("includeHiddenExtensions: ids %v lack acme-gadgets", withHidden)
		}
		// "Acme Gadgets" sorts before "Acme Widgets" and both before "Kubernetes".
		if i, j, k := slices.Index(withHidden, "acme-gadgets"), slices.Index(withHidden, "acme-widgets"), slices.Index(withHidden, "kubernetes"); !(i < j && j < k) {
			t.Fatalf("order %v", withHidden)
		}

		// The filter keeps extensions sharing at least one integration.
		if got := list(t, env, key, `{"filter":{"integrations":["acme-widget-agent"]},"includeHiddenExtensions":true}`).ids(); !reflect.DeepEqual(got, []string{"acme-gadgets", "acme-widgets"}) {
			t.Fatalf("filter acme-widget-agent: %v", got)
		}
		if got := list(t, env, key, `{"filter":{"integrations":["acme-widget-agent"]}}`).ids(); !reflect.DeepEqual(got, []string{"acme-widgets"}) {
			t.Fatalf("filter acme-widget-agent without hidden: %v", got)
		}
		if got := list(t, env, key, `{"filter":{"integrations":["nothing-uses-this","acme-gadget-agent"]},"includeHiddenExtensions":true}`).ids(); !reflect.DeepEqual(got, []string{"acme-gadgets"}) {
			t.Fatalf("filter acme-gadget-agent: %v", got)
		}
		if got := list(t, env, key, `{"filter":{"integrations":["nothing-uses-this"]}}`).ids(); len(got) != 0 {
			t.Fatalf("filter matching nothing: %v", got)
		}
		k8s := list(t, env, key, `{"filter":{"integrations":["kubernetes-collector"]}}`)
		if !slices.Contains(k8s.ids(), "kubernetes") || slices.Contains(k8s.ids(), "acme-widgets") {
			t.Fatalf("filter kubernetes-collector: %v", k8s.ids())
		}

		// kubernetes: the testing revision is not listed; counts are exact and complete.
		var found bool
		for _, e := range k8s.Extensions {
			if e.ID != "kubernetes" {
				continue
			}
			found = true
			if e.Name != "Kubernetes" || e.Image != "/static/extensions/kubernetes.svg" || e.Deprecation != nil ||
				!reflect.DeepEqual(e.Integrations, []string{"kubernetes-collector", "otel-agent"}) {
				t.Fatalf("kubernetes: %+v", e)
			}
			if got := []string{e.Revisions[0].Version, e.Revisions[1].Version}; len(e.Revisions) != 2 || !reflect.DeepEqual(got, []string{"2.1.0", "1.0.0"}) {
				t.Fatalf("kubernetes revisions: %+v", e.Revisions)
			}
			r := e.Revisions[0]
			want := counts{"actions": 0, "alerts": 2, "customDashboards": 1, "enrichments": 0, "eventsToMetrics": 0,
				"grafanaDashboards": 0, "kibanaDashboards": 0, "metricsRuleGroup": 0, "parsingRules": 1, "savedViews": 1}
			if !reflect.DeepEqual(r.Summary.ItemCounts, want) || !r.Summary.IsNew {
				t.Fatalf("kubernetes 2.1.0 summary: %+v, want isNew and %v", r.Summary, want)
			}
			if r.Excerpt != "Cluster health, pod lifecycle and container logs." || !reflect.DeepEqual(r.Labels, []string{"containers", "orchestration"}) ||
				len(r.IntegrationDetails) != 1 || r.IntegrationDetails[0].Name != "Kubernetes collector" {
				t.Fatalf("kubernetes 2.1.0: %+v", r)
			}
			if e.Revisions[1].Summary.IsNew || e.Revisions[1].Summary.ItemCounts["kibanaDashboards"] != 1 {
				t.Fatalf("kubernetes 1.0.0 summary: %+v", e.Revisions[1].Summary)
			}
		}
		if !found {
			t.Fatal("kubernetes not listed")
		}

		// acme-widgets: deprecation, counts of every domain it uses, no testing revision.
		acme := list(t, env, key, `{"filter":{"integrations":["acme-widget-agent"]}}`).Extensions[0]
		if acme.Deprecation == nil || acme.Deprecation.Reason != "Acme Gadgets covers widgets too." ||
			!reflect.DeepEqual(acme.Deprecation.ReplacementExtensions, []string{"acme-gadgets"}) {
			t.Fatalf("acme deprecation: %+v", acme.Deprecation)
		}
		if len(acme.Revisions) != 2 || acme.Revisions[0].Version != "2.0.0" || acme.DarkModeImage != "" ||
			!reflect.DeepEqual(acme.Revisions[1].Labels, []string{}) {
			t.Fatalf("acme revisions: %+v", acme.Revisions)
		}
		want := counts{"actions": 1, "alerts": 1, "customDashboards": 0, "enrichments": 1, "eventsToMetrics": 1,
			"grafanaDashboards": 1, "kibanaDashboards": 0, "metricsRuleGroup": 0, "parsingRules": 0, "savedViews": 0}
		if !reflect.DeepEqual(acme.Revisions[0].Summary.ItemCounts, want) {
			t.Fatalf("acme 2.0.0 counts %v, want %v", acme.Revisions[0].Summary.ItemCounts, want)
		}
	})
}

func TestListExtensionsFilterBounds(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "t")
		filter := func(integrations []string) string {
			b, _ := json.Marshal(map[string]any{"filter": map[string]any{"integrations": integrations}})
			return string(b)
		}
		many := func(n int) []string {
			out := make([]string, n)
			for i := range out {
				out[i] = fmt.Sprintf("integration-%d", i)
			}
			return out
		}
		// The newest public document's bounds: 0-10000 integrations of any length.
		list(t, env, key, filter(many(10000)))
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, allPath, key, filter(many(10001))), 400,
			"filter.integrations: must have at most 10000 items (got 10001)")
		list(t, env, key, filter([]string{strings.Repeat("i", 65535), ""}))
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, allPath, key, filter([]string{"ok", strings.Repeat("i", 65536)})), 400,
			"filter.integrations[1]: must have at most 65535 characters (got 65536)")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, allPath, key, `{"includeHiddenExtensions":"yes"}`), 400,
			"includeHiddenExtensions")
	})
}

func TestGetExtensionSplitsByPermission(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, full := env.MustTeam(t, "t")
		parsingOnly := env.MustKey(t, full, "extensions:ReadConfig", "parsing-rules:UpdateConfig")
		withDashboards := env.MustKey(t, full, "extensions:ReadConfig", "parsing-rules:UpdateConfig", "team-dashboards:Update")

		// Only parsing rules: 2.1.0's mandatory dashboard is denied, so is 1.0.0's mandatory Kibana
		// dashboard; both revisions are denied.
		e := getExtension(t, env, parsingOnly, "kubernetes")
		if len(e.Revisions) != 0 || !reflect.DeepEqual(versions(e.PermissionDeniedRevisions), []string{"2.1.0", "1.0.0"}) {
			t.Fatalf("parsing-only: revisions %v, denied %v", versions(e.Revisions), versions(e.PermissionDeniedRevisions))
		}
		r := e.PermissionDeniedRevisions[0]
		if !reflect.DeepEqual(itemIDs(r.Items), []string{"k8s-container-logs"}) ||
			!reflect.DeepEqual(itemIDs(r.PermissionDeniedItems), []string{"k8s-cluster-dashboard", "k8s-node-pressure", "k8s-crashloop", "k8s-evicted-pods"}) {
			t.Fatalf("parsing-only 2.1.0: items %v, denied %v", itemIDs(r.Items), itemIDs(r.PermissionDeniedItems))
		}
		old := e.PermissionDeniedRevisions[1]
		if !reflect.DeepEqual(itemIDs(old.Items), []string{"k8s-container-logs"}) || !reflect.DeepEqual(itemIDs(old.PermissionDeniedItems), []string{"k8s-kibana-dashboard"}) {
			t.Fatalf("parsing-only 1.0.0: items %v, denied %v", itemIDs(old.Items), itemIDs(old.PermissionDeniedItems))
		}

		// With team-dashboards:Update, 2.1.0 is deployable; 1.0.0 still is not.
		e = getExtension(t, env, withDashboards, "kubernetes")
		if !reflect.DeepEqual(versions(e.Revisions), []string{"2.1.0"}) || !reflect.DeepEqual(versions(e.PermissionDeniedRevisions), []string{"1.0.0"}) {
			t.Fatalf("with dashboards: revisions %v, denied %v", versions(e.Revisions), versions(e.PermissionDeniedRevisions))
		}
		r = e.Revisions[0]
		if !reflect.DeepEqual(itemIDs(r.Items), []string{"k8s-cluster-dashboard", "k8s-container-logs"}) ||
			!reflect.DeepEqual(itemIDs(r.PermissionDeniedItems), []string{"k8s-node-pressure", "k8s-crashloop", "k8s-evicted-pods"}) {
			t.Fatalf("with dashboards 2.1.0: items %v, denied %v", itemIDs(r.Items), itemIDs(r.PermissionDeniedItems))
		}

		// Every permission: everything is in items.
		e = getExtension(t, env, full, "kubernetes")
		if !reflect.DeepEqual(versions(e.Revisions), []string{"2.1.0", "1.0.0"}) || len(e.PermissionDeniedRevisions) != 0 {
			t.Fatalf("full: revisions %v, denied %v", versions(e.Revisions), versions(e.PermissionDeniedRevisions))
		}
		for _, r := range e.Revisions {
			if len(r.PermissionDeniedItems) != 0 || r.IsTesting {
				t.Fatalf("full %s: denied items %v, testing %v", r.Version, itemIDs(r.PermissionDeniedItems), r.IsTesting)
			}
		}
		if len(e.Revisions[0].Items) != 5 || len(e.Changelog) == 0 || e.Changelog[0].Version != "2.1.0" ||
			!strings.Contains(e.Changelog[0].DescriptionMd, "**node pressure**") {
			t.Fatalf("full: %d items, changelog %+v", len(e.Revisions[0].Items), e.Changelog)
		}
		if b := e.Revisions[1].Binaries; len(b) != 1 || b[0].Type != "KIBANA_INDEX_PATTERN" || b[0].Data != `{"title":"k8s-*"}` {
			t.Fatalf("1.0.0 binaries %+v", b)
		}
		dash := itemByID(t, e.Revisions[0], "k8s-cluster-dashboard")
		if dash.StableID != "kubernetes/k8s-cluster-dashboard" || dash.UniqueID != "kubernetes@2.1.0/k8s-cluster-dashboard" ||
			dash.ExtendedInternalID != "kubernetes@2.1.0/k8s-cluster-dashboard" || !dash.IsMandatory ||
			dash.TargetDomain != "PLATFORM_CUSTOM_DASHBOARD" || dash.PermissionResource != "PLATFORM_CUSTOM_DASHBOARD" || dash.Name != "Kubernetes cluster overview" {
			t.Fatalf("dashboard item: %+v", dash)
		}
		var data map[string]any
		if err := json.Unmarshal(dash.Data, &data); err != nil || !reflect.DeepEqual(data, map[string]any{
			"name": "Kubernetes cluster overview", "layout": map[string]any{"sections": []any{}}}) {
			t.Fatalf("dashboard data %s", dash.Data)
		}
	})
}

func TestGetExtensionFlags(t *testing.T) {
	apitest.EnginesWith(t, apitest.Options{Extensions: operatorCatalog(t)}, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "t")
		binaryTypes := func(it itemDoc) []string {
			out := []string{}
			for _, b := range it.Binaries {
				out = append(out, b.Type)
			}
			return out
		}

		// Testing revision: only when asked.
		for query, want := range map[string][]string{
			"":                                {"2.1.0", "1.0.0"},
			"?include_testing_revision=false": {"2.1.0", "1.0.0"},
			"?include_testing_revision=true":  {"2.2.0-rc.1", "2.1.0", "1.0.0"},
		} {
			e := getExtension(t, env, key, "kubernetes"+query)
			if !reflect.DeepEqual(versions(e.Revisions), want) {
				t.Fatalf("%q: versions %v, want %v", query, versions(e.Revisions), want)
			}
			if len(want) == 3 && !e.Revisions[0].IsTesting {
				t.Fatal("2.2.0-rc.1 is not marked isTesting")
			}
		}

		// Dashboard definitions: only when asked; previews and enrichment CSVs always.
		for query, want := range map[string][]string{
			"":                                  {"PREVIEW_IMAGE"},
			"?include_dashboard_binaries=false": {"PREVIEW_IMAGE"},
			"?include_dashboard_binaries=true":  {"PREVIEW_IMAGE", "PLATFORM_CUSTOM_DASHBOARD_DEFINITION"},
		} {
			e := getExtension(t, env, key, "kubernetes"+query)
			if got := binaryTypes(itemByID(t, revisionByVersion(t, e.Revisions, "2.1.0"), "k8s-cluster-dashboard")); !reflect.DeepEqual(got, want) {
				t.Fatalf("%q: binaries %v, want %v", query, got, want)
			}
		}
		e := getExtension(t, env, key, "acme-widgets")
		r := revisionByVersion(t, e.Revisions, "2.0.0")
		if got := binaryTypes(itemByID(t, r, "widget-grafana")); !reflect.DeepEqual(got, []string{"PREVIEW_IMAGE"}) {
			t.Fatalf("grafana binaries %v", got)
		}
		if got := itemByID(t, r, "widget-geo").Binaries; len(got) != 1 || got[0] != (binaryDoc{"ENRICHMENT_CSV", "geo.csv", "YSxi"}) {
			t.Fatalf("enrichment binaries %+v", got)
		}
		e = getExtension(t, env, key, "acme-widgets?include_dashboard_binaries=true&include_testing_revision=true")
		if got := binaryTypes(itemByID(t, revisionByVersion(t, e.Revisions, "2.0.0"), "widget-grafana")); !reflect.DeepEqual(got, []string{"PREVIEW_IMAGE", "GRAFANA_DASHBOARD_DEFINITION"}) {
			t.Fatalf("grafana binaries with flag %v", got)
		}
		if !reflect.DeepEqual(versions(e.Revisions), []string{"3.0.0-beta.1", "2.0.0", "1.0.0"}) {
			t.Fatalf("acme versions %v", versions(e.Revisions))
		}

		// Hidden extensions are readable by id; unknown ids are 404; a bad flag is a 400.
		if e := getExtension(t, env, key, "acme-gadgets"); e.ID != "acme-gadgets" || len(e.Changelog) != 0 {
			t.Fatalf("hidden: %+v", e)
		}
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, base+"/no-such-extension", key, ""), 404, `id: no extension "no-such-extension" in the catalog`)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, base+"/kubernetes?include_testing_revision=maybe", key, ""), 400, `include_testing_revision: must be true or false (got "maybe")`)
	})
}

func TestExtensionsAuthorization(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, full := env.MustTeam(t, "t")
		views := env.MustKey(t, full, "team-saved-views:Read")
		reader := env.MustKey(t, full, "extensions:ReadConfig")
		apitest.ExpectError(t, env.Do(t, http.MethodGet, base+"/kubernetes", "", "", ""), 401)
		apitest.ExpectError(t, env.Do(t, http.MethodPost, allPath, "", "application/json", "{}"), 401)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, base+"/kubernetes", views, ""), 403, "extensions:ReadConfig")
		apitest.ExpectError(t, env.JSON(t, http.MethodPost, allPath, views, "{}"), 403, "extensions:ReadConfig")
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, deployedPath, views, ""), 403, "extensions:ReadConfig")
		// Reading does not allow deploying.
		apitest.ExpectError(t, env.JSON(t, http.MethodPut, deployedPath+"?"+flatQuery, reader, ""), 403, "extensions:Deploy")
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, deployedPath, reader, `{"id":"kubernetes"}`), 403, "extensions:Deploy")
		// GET /deployed is the team's list, not the extension "deployed".
		got := apitest.Decode[struct{ DeployedExtensions []deployedDoc }](t, env.JSON(t, http.MethodGet, deployedPath, reader, ""))
		if got.DeployedExtensions == nil || len(got.DeployedExtensions) != 0 {
			t.Fatalf("GET /deployed: %+v", got)
		}
	})
}

// ---------------------------------------------------------------- deployments

type deploymentDoc struct {
	ID, Version                       string
	ItemIds, Applications, Subsystems []string
}

type deployedDoc struct {
	deploymentDoc
	Summary struct{ DeployedItemCounts counts }
}

const flatQuery = "id=kubernetes&version=2.1.0&item_ids=k8s-cluster-dashboard&item_ids=k8s-container-logs&applications=shop&applications=billing&subsystems=api"

var flatWant = deploymentDoc{ID: "kubernetes", Version: "2.1.0", ItemIds: []string{"k8s-cluster-dashboard", "k8s-container-logs"},
	Applications: []string{"shop", "billing"}, Subsystems: []string{"api"}}

func call(t *testing.T, env *apitest.Env, method, key, query string) apitest.Response {
	t.Helper()
	return env.Do(t, method, deployedPath+"?"+query, "Bearer "+key, "", "")
}

func deploymentOf(t *testing.T, res apitest.Response) deploymentDoc {
	t.Helper()
	return apitest.Decode[struct{ ExtensionDeployment deploymentDoc }](t, res).ExtensionDeployment
}

func deployedList(t *testing.T, env *apitest.Env, key string) []deployedDoc {
	t.Helper()
	return apitest.Decode[struct{ DeployedExtensions []deployedDoc }](t, env.JSON(t, http.MethodGet, deployedPath, key, "")).DeployedExtensions
}

func deployedOne(t *testing.T, env *apitest.Env, key, id string) deployedDoc {
	t.Helper()
	return apitest.Decode[struct{ DeployedExtension deployedDoc }](t, env.JSON(t, http.MethodGet, deployedPath+"/"+id, key, "")).DeployedExtension
}

func expectNothingDeployed(t *testing.T, env *apitest.Env, key string) {
	t.Helper()
	if got := deployedList(t, env, key); len(got) != 0 {
		t.Fatalf("deployed: %+v, want none", got)
	}
}

func TestDeployForms(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "t")
		jsonDoc, _ := json.Marshal(flatWant)
		forms := map[string]string{
			"flat": flatQuery,
			"bracket": "extension_deployment[id]=kubernetes&extension_deployment[version]=2.1.0" +
				"&extension_deployment[itemIds]=k8s-cluster-dashboard&extension_deployment[itemIds]=k8s-container-logs" +
				"&extension_deployment[applications]=shop&extension_deployment[applications]=billing&extension_deployment[subsystems]=api",
			"indexed": "extension_deployment[id]=kubernetes&extension_deployment[version]=2.1.0" +
				"&extension_deployment[itemIds][1]=k8s-container-logs&extension_deployment[itemIds][0]=k8s-cluster-dashboard" +
				"&extension_deployment[applications][0]=shop&extension_deployment[applications][1]=billing&extension_deployment[subsystems][0]=api",
			"dot": "extension_deployment.id=kubernetes&extension_deployment.version=2.1.0" +
				"&extension_deployment.itemIds=k8s-cluster-dashboard&extension_deployment.itemIds=k8s-container-logs" +
				"&extension_deployment.applications=shop&extension_deployment.applications=billing&extension_deployment.subsystems=api",
			"json": "extension_deployment=" + url.QueryEscape(string(jsonDoc)),
		}
		for name, query := range forms {
			if got := deploymentOf(t, call(t, env, http.MethodPut, key, query)); !reflect.DeepEqual(got, flatWant) {
				t.Fatalf("%s: deployed %+v, want %+v", name, got, flatWant)
			}
			d := deployedOne(t, env, key, "kubernetes")
			if !reflect.DeepEqual(d.deploymentDoc, flatWant) {
				t.Fatalf("%s: read back %+v", name, d)
			}
			want := counts{"actions": 0, "alerts": 0, "customDashboards": 1, "enrichments": 0, "eventsToMetrics": 0,
				"grafanaDashboards": 0, "kibanaDashboards": 0, "metricsRuleGroup": 0, "parsingRules": 1, "savedViews": 0}
			if !reflect.DeepEqual(d.Summary.DeployedItemCounts, want) {
				t.Fatalf("%s: counts %v, want %v", name, d.Summary.DeployedItemCounts, want)
			}
			// The same deployment through E13 in this form is accepted too.
			if got := deploymentOf(t, call(t, env, http.MethodPost, key, query)); !reflect.DeepEqual(got, flatWant) {
				t.Fatalf("%s: updated %+v", name, got)
			}
			undeployed := apitest.Decode[struct {
				ExtensionDeployment deploymentDoc
				FailedItems         []any
			}](t, env.JSON(t, http.MethodDelete, deployedPath, key, `{"id":"kubernetes"}`))
			if !reflect.DeepEqual(undeployed.ExtensionDeployment, flatWant) || undeployed.FailedItems == nil || len(undeployed.FailedItems) != 0 {
				t.Fatalf("%s: undeploy answered %+v", name, undeployed)
			}
			expectNothingDeployed(t, env, key)
		}

		// Mixing the forms names both.
		apitest.ExpectError(t, call(t, env, http.MethodPut, key, "id=kubernetes&extension_deployment[version]=2.1.0"), 400,
			"extension_deployment and id:", "not both")
		apitest.ExpectError(t, call(t, env, http.MethodPost, key, "extension_deployment.id=kubernetes&item_ids=a&version=1"), 400,
			"extension_deployment and version, item_ids:")
		expectNothingDeployed(t, env, key)
	})
}

func TestDeployRules(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "t")
		k := "id=kubernetes&version=2.1.0&item_ids=k8s-cluster-dashboard"
		cases := []struct {
			query     string
			status    int
			fragments []string
		}{
			{"", 400, []string{"id: is required"}},
			{"version=2.1.0&item_ids=k8s-cluster-dashboard", 400, []string{"id: is required"}},
			{"extension_deployment[version]=2.1.0", 400, []string{"extension_deployment.id: is required"}},
			{"id=no-such&version=1.0.0&item_ids=a", 404, []string{`id: no extension "no-such" in the catalog`}},
			{"extension_deployment.id=no-such", 404, []string{`extension_deployment.id: no extension "no-such"`}},
			{"id=kubernetes&item_ids=k8s-cluster-dashboard", 400, []string{"version: is required"}},
			{"id=kubernetes&version=9.9.9&item_ids=k8s-cluster-dashboard", 400,
				[]string{`version: "9.9.9" is not a version of extension kubernetes (versions: 2.2.0-rc.1, 2.1.0, 1.0.0)`}},
			{"id=kubernetes&version=2.1.0", 400, []string{"item_ids: must have at least 1 item (got 0)"}},
			{k + "&item_ids=k8s-container-logs&item_ids=k8s-cluster-dashboard", 400, []string{`item_ids[2]: "k8s-cluster-dashboard" is listed twice`}},
			{k + "&item_ids=k8s-kibana-dashboard", 400, []string{`item_ids[1]: "k8s-kibana-dashboard" is not an item of extension kubernetes version 2.1.0`}},
			{"id=kubernetes&version=2.1.0&item_ids=k8s-container-logs", 400,
				[]string{`item_ids: must include the mandatory item "k8s-cluster-dashboard" of extension kubernetes version 2.1.0`}},
			{"extension_deployment.id=kubernetes&extension_deployment.version=2.1.0&extension_deployment.itemIds=k8s-evicted-pods", 400,
				[]string{`extension_deployment.itemIds: must include the mandatory item "k8s-cluster-dashboard"`}},
			{k + "&applications=", 400, []string{"applications[0]: must have at least 1 character (got 0)"}},
			{k + "&applications=a&applications=b&applications=a", 400, []string{`applications[2]: "a" is listed twice`}},
			{k + "&subsystems=x&subsystems=" + strings.Repeat("s", 256), 400, []string{"subsystems[1]: must have at most 255 characters (got 256)"}},
			{"extension_deployment[id]=kubernetes&extension_deployment[version]=2.1.0&extension_deployment[itemIds]=k8s-cluster-dashboard" +
				"&extension_deployment[subsystems]=" + strings.Repeat("s", 256), 400, []string{"extension_deployment.subsystems[0]: must have at most 255 characters (got 256)"}},
			{"extension_deployment[id]=kubernetes&extension_deployment[version]=2.1.0&extension_deployment[itemIds]=k8s-cluster-dashboard" +
				"&extension_deployment[applications]=a&extension_deployment[applications]=a", 400, []string{`extension_deployment.applications[1]: "a" is listed twice`}},
			{"extension_deployment[id]=kubernetes&extension_deployment[id]=other", 400, []string{"extension_deployment.id: must be given once"}},
			{`extension_deployment={"id":5}`, 400, []string{"extension_deployment: must be an object"}},
		}
		for _, c := range cases {
			for _, method := range []string{http.MethodPut, http.MethodPost} {
				apitest.ExpectError(t, call(t, env, method, key, c.query), c.status, c.fragments...)
			}
		}
		expectNothingDeployed(t, env, key)

		// At the bounds: 255 characters pass, in both forms.
		long := strings.Repeat("s", 255)
		got := deploymentOf(t, call(t, env, http.MethodPut, key, k+"&subsystems="+long+"&applications="+strings.Repeat("a", 255)))
		if len(got.Subsystems) != 1 || got.Subsystems[0] != long {
			t.Fatalf("255-character subsystem: %+v", got)
		}
		got = deploymentOf(t, call(t, env, http.MethodPost, key, "extension_deployment[id]=kubernetes&extension_deployment[version]=2.1.0"+
			"&extension_deployment[itemIds]=k8s-cluster-dashboard&extension_deployment[applications]="+long))
		if len(got.Applications) != 1 || got.Applications[0] != long || len(got.Subsystems) != 0 {
			t.Fatalf("255-character application: %+v", got)
		}
	})
}

func TestDeployItemPermissions(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, full := env.MustTeam(t, "t")
		deployer := env.MustKey(t, full, "extensions:ReadConfig", "extensions:Deploy", "team-dashboards:Update")
		apitest.ExpectError(t, call(t, env, http.MethodPut, deployer, flatQuery), 403,
			`item_ids[1]: deploying item "k8s-container-logs" (PARSING_RULE) needs the permission "parsing-rules:UpdateConfig"`)
		expectNothingDeployed(t, env, full)
		// The items it may deploy are fine.
		got := deploymentOf(t, call(t, env, http.MethodPut, deployer, "id=kubernetes&version=2.1.0&item_ids=k8s-cluster-dashboard"))
		if !reflect.DeepEqual(got.ItemIds, []string{"k8s-cluster-dashboard"}) {
			t.Fatalf("deployed %+v", got)
		}
		// Nor may it change the deployment to hold an item it may not deploy.
		apitest.ExpectError(t, call(t, env, http.MethodPost, deployer, "id=kubernetes&version=2.1.0&item_ids=k8s-cluster-dashboard&item_ids=k8s-node-pressure"), 403,
			`"k8s-node-pressure"`, `"alerts:UpdateConfig"`)
		if d := deployedOne(t, env, full, "kubernetes"); !reflect.DeepEqual(d.ItemIds, []string{"k8s-cluster-dashboard"}) {
			t.Fatalf("after refused update: %+v", d)
		}
		// Without extensions:Deploy nothing is possible, whatever the item permissions.
		noDeploy := env.MustKey(t, full, "extensions:ReadConfig", "team-dashboards:Update", "parsing-rules:UpdateConfig")
		apitest.ExpectError(t, call(t, env, http.MethodPost, noDeploy, flatQuery), 403, "extensions:Deploy")
	})
}

func TestDeploymentLifecycle(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "a")
		_, other := env.MustTeam(t, "b")

		apitest.ExpectError(t, call(t, env, http.MethodPost, key, flatQuery), 404, `id: extension "kubernetes" is not deployed in the team`)
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, deployedPath+"/kubernetes", key, ""), 404, `extension "kubernetes" is not deployed in the team`)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, deployedPath, key, `{"id":"kubernetes"}`), 404, `id: extension "kubernetes" is not deployed`)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, deployedPath, key, `{"id":""}`), 400, "id: must have at least 1 character (got 0)")
		expectNothingDeployed(t, env, key)

		deploymentOf(t, call(t, env, http.MethodPut, key, flatQuery))
		apitest.ExpectError(t, call(t, env, http.MethodPut, key, "id=kubernetes&version=1.0.0&item_ids=k8s-kibana-dashboard"), 409,
			`id: extension "kubernetes" is already deployed in the team`)

		// E13 changes the version, the items and the scopes; GET shows the change.
		updated := deploymentOf(t, call(t, env, http.MethodPost, key, "id=kubernetes&version=1.0.0&item_ids=k8s-kibana-dashboard&item_ids=k8s-container-logs&subsystems=jobs"))
		want := deploymentDoc{ID: "kubernetes", Version: "1.0.0", ItemIds: []string{"k8s-kibana-dashboard", "k8s-container-logs"},
			Applications: []string{}, Subsystems: []string{"jobs"}}
		if !reflect.DeepEqual(updated, want) {
			t.Fatalf("updated %+v, want %+v", updated, want)
		}
		d := deployedOne(t, env, key, "kubernetes")
		if !reflect.DeepEqual(d.deploymentDoc, want) || d.Summary.DeployedItemCounts["kibanaDashboards"] != 1 ||
			d.Summary.DeployedItemCounts["parsingRules"] != 1 || d.Summary.DeployedItemCounts["customDashboards"] != 0 || len(d.Summary.DeployedItemCounts) != 10 {
			t.Fatalf("read back %+v", d)
		}

		// Another team sees nothing and can change nothing, but deploys its own.
		apitest.ExpectError(t, env.JSON(t, http.MethodGet, deployedPath+"/kubernetes", other, ""), 404)
		apitest.ExpectError(t, call(t, env, http.MethodPost, other, flatQuery), 404)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, deployedPath, other, `{"id":"kubernetes"}`), 404)
		expectNothingDeployed(t, env, other)
		deploymentOf(t, call(t, env, http.MethodPut, other, flatQuery))
		if d := deployedOne(t, env, key, "kubernetes"); d.Version != "1.0.0" {
			t.Fatalf("the other team's deploy changed ours: %+v", d)
		}

		// Survives a restart.
		env.Restart(t)
		if got := deployedList(t, env, key); len(got) != 1 || !reflect.DeepEqual(got[0].deploymentDoc, want) {
			t.Fatalf("after restart: %+v", got)
		}

		// Undeploy: a kept item must be one of the deployment's; a refused undeploy removes nothing.
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, deployedPath, key, `{"id":"kubernetes","keptExtensionItems":["k8s-container-logs","k8s-cluster-dashboard"]}`), 400,
			`keptExtensionItems[1]: "k8s-cluster-dashboard" is not an item of the deployment of kubernetes`)
		apitest.ExpectError(t, env.JSON(t, http.MethodDelete, deployedPath, key, `{"keptExtensionItems":[]}`), 400, "id: is required")
		if got := deployedList(t, env, key); len(got) != 1 {
			t.Fatalf("after refused undeploys: %+v", got)
		}
		res := apitest.Decode[struct {
			ExtensionDeployment deploymentDoc
			FailedItems         []any
		}](t, env.JSON(t, http.MethodDelete, deployedPath, key, `{"id":"kubernetes","keptExtensionItems":["k8s-container-logs"]}`))
		if !reflect.DeepEqual(res.ExtensionDeployment, want) || len(res.FailedItems) != 0 {
			t.Fatalf("undeploy answered %+v", res)
		}
		expectNothingDeployed(t, env, key)
		if got := deployedList(t, env, other); len(got) != 1 {
			t.Fatalf("the other team's deployment: %+v", got)
		}
	})
}

func TestDeployListOrderAndOperatorExtension(t *testing.T) {
	apitest.EnginesWith(t, apitest.Options{Extensions: operatorCatalog(t)}, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "t")
		deploymentOf(t, call(t, env, http.MethodPut, key, flatQuery))
		deploymentOf(t, call(t, env, http.MethodPut, key, "id=acme-widgets&version=2.0.0&item_ids=widget-alert&item_ids=widget-geo&item_ids=widget-span-metrics&item_ids=widget-action&item_ids=widget-grafana"))
		deploymentOf(t, call(t, env, http.MethodPut, key, "id=acme-gadgets&version=1.0.0&item_ids=gadget-view"))
		got := deployedList(t, env, key)
		if ids := []string{got[0].ID, got[1].ID, got[2].ID}; len(got) != 3 || !reflect.DeepEqual(ids, []string{"acme-gadgets", "acme-widgets", "kubernetes"}) {
			t.Fatalf("order %+v", got)
		}
		want := counts{"actions": 1, "alerts": 1, "customDashboards": 0, "enrichments": 1, "eventsToMetrics": 1,
			"grafanaDashboards": 1, "kibanaDashboards": 0, "metricsRuleGroup": 0, "parsingRules": 0, "savedViews": 0}
		if !reflect.DeepEqual(got[1].Summary.DeployedItemCounts, want) {
			t.Fatalf("acme-widgets counts %v", got[1].Summary.DeployedItemCounts)
		}
		// The testing revision can be deployed by its version.
		deploymentOf(t, call(t, env, http.MethodPost, key, "id=acme-widgets&version=3.0.0-beta.1&item_ids=widget-alert"))
		if d := deployedOne(t, env, key, "acme-widgets"); d.Version != "3.0.0-beta.1" || d.Summary.DeployedItemCounts["alerts"] != 1 {
			t.Fatalf("testing revision: %+v", d)
		}
	})
}

func TestDeployApplicationsBound(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "t")
		names := func(n int) []string {
			out := make([]string, n)
			for i := range out {
				out[i] = fmt.Sprintf("app-%05d", i)
			}
			return out
		}
		jsonForm := func(apps []string) string {
			b, _ := json.Marshal(map[string]any{"id": "kubernetes", "version": "2.1.0", "itemIds": []string{"k8s-cluster-dashboard"}, "applications": apps})
			return "extension_deployment=" + url.QueryEscape(string(b))
		}
		got := deploymentOf(t, call(t, env, http.MethodPut, key, jsonForm(names(10000))))
		if len(got.Applications) != 10000 || got.Applications[9999] != "app-09999" {
			t.Fatalf("10000 applications: %d", len(got.Applications))
		}
		apitest.ExpectError(t, call(t, env, http.MethodPost, key, jsonForm(names(10001))), 400,
			"extension_deployment.applications: must have at most 10000 items (got 10001)")

		// The flat form carries at most 10000 query parameters in all.
		flat := func(n int) string {
			var b strings.Builder
			b.WriteString("id=kubernetes&version=2.1.0&item_ids=k8s-cluster-dashboard")
			for _, a := range names(n) {
				b.WriteString("&subsystems=" + a)
			}
			return b.String()
		}
		got = deploymentOf(t, call(t, env, http.MethodPost, key, flat(9997)))
		if len(got.Subsystems) != 9997 || len(got.Applications) != 0 {
			t.Fatalf("9997 subsystems: %d, %d applications", len(got.Subsystems), len(got.Applications))
		}
		apitest.ExpectError(t, call(t, env, http.MethodPost, key, flat(10001)), 400, "subsystems: given 10001 times")
		if d := deployedOne(t, env, key, "kubernetes"); len(d.Subsystems) != 9997 {
			t.Fatalf("after refused update: %d subsystems", len(d.Subsystems))
		}
	})
}

func TestConcurrentDeploys(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		_, key := env.MustTeam(t, "t")
		const n = 8
		statuses := make([]int, n)
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, err := http.NewRequest(http.MethodPut, env.URL+deployedPath+"?"+flatQuery, nil)
				if err != nil {
					errs[i] = err
					return
				}
				req.Header.Set("Authorization", "Bearer "+key)
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					errs[i] = err
					return
				}
				_ = res.Body.Close()
				statuses[i] = res.StatusCode
			}()
		}
		wg.Wait()
		byStatus := map[int]int{}
		for i := range n {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			byStatus[statuses[i]]++
		}
		if byStatus[200] != 1 || byStatus[409] != n-1 {
			t.Fatalf("statuses %v, want one 200 and %d 409", byStatus, n-1)
		}
		if got := deployedList(t, env, key); len(got) != 1 {
			t.Fatalf("deployed %+v", got)
		}
	})
}
