package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"time"
)

// Paths of the operations the scenarios drive.
const (
	recordingRuleSetsPath = "/mgmt/openapi/5/recording-rules/recording-rules/v1"
	policiesPath          = "/mgmt/openapi/3/dataplans/policies/v1"
	policyListPath        = "/mgmt/openapi/5/dataplans/policies/v1"
	casesPath             = "/mgmt/openapi/5/cases/cases/v1"
	aggregationsPath      = "/mgmt/openapi/4/incidents/aggregations/v1"
	ingestPath            = "/ingest/alertmanager/v1"
	adminTeamsPath        = "/admin/v1/teams"
)

// scenario is one measured profile: every worker asks next for its requests.
type scenario struct {
	name  string
	title string
	next  func(f *fixture) nextRequest
	// maxConnections, when not 0, caps the connections of this scenario.
	maxConnections int
}

// scenarios in the order they run and print with -scenarios all. The list runs last: the memory
// it leaves to the garbage collector would count in the peak of the scenarios after it.
var scenarios = []scenario{
	{name: "get", title: "GET one recording-rule set by id (auth + read)", next: func(f *fixture) nextRequest {
		return func(int, int) request { return f.getSet() }
	}},
	{name: "create-set", title: "create a recording-rule set (durable)", next: func(f *fixture) nextRequest { return f.createSet }},
	{name: "comment", title: "E1 comment on a case (durable)", next: func(f *fixture) nextRequest { return f.comment }},
	{name: "create-policy", title: "create a policy (durable)", next: func(f *fixture) nextRequest { return f.createPolicy }},
	{name: "e18", title: "E18 incident aggregations over -incidents incidents, one connection: p50 is the latency of one request",
		maxConnections: 1, next: func(f *fixture) nextRequest {
			return func(int, int) request { return request{method: "GET", path: f.aggregationsQuery} }
		}},
	{name: "mixed", title: "mixed: 80% GET by id, 10% E1 comments, 10% set creates", next: func(f *fixture) nextRequest {
		return func(w, seq int) request {
			switch seq % 10 {
			case 8:
				return f.comment(w, seq)
			case 9:
				return f.createSet(w, seq)
			default:
				return f.getSet()
			}
		}
	}},
	{name: "list", title: "list the sets of a team holding -sets of them (10 connections at most)", maxConnections: 10,
		next: func(f *fixture) nextRequest {
			return func(int, int) request {
				return request{method: "GET", path: recordingRuleSetsPath, authorization: "Bearer " + f.listKey}
			}
		}},
	{name: "list-policies", title: "list the policies of a team holding -policies of them, a list with parameters (10 connections at most)",
		maxConnections: 10, next: func(f *fixture) nextRequest {
			return func(int, int) request {
				return request{method: "GET", path: f.policyListQuery, authorization: "Bearer " + f.policyListKey}
			}
		}},
	{name: "comment-one-case", title: "E1 comments all on one case (durable; every request updates the same row)",
		next: func(f *fixture) nextRequest { return f.commentOneCase }},
}

// standalone are measurements that are not load scenarios: each runs, against a server of its
// own, when -scenarios names it (all does not include them).
var standalone = map[string]func(ctx context.Context, o options, bin, workDir string, stdout, stderr io.Writer) error{
	"overbound": measureOverbound,
	"mutation":  measureMutation,
}

// fixture is the data the scenarios work on: a team of its own, created for this run, with one
// recording-rule set to read, cases to comment on and incidents to aggregate, and a second team
// whose only data are the sets the list scenario reads.
type fixture struct {
	key               string // the team's API key
	listKey           string // the API key of a second team holding only the sets the list scenario reads
	policyListKey     string // the API key of a team holding only the policies the list-policies scenario reads
	policyListQuery   string
	run               string // distinguishes this run's names
	setPath           string
	caseIDs           []string
	aggregationsQuery string
}

// casesToComment is how many cases the comment scenario spreads its comments over.
const casesToComment = 16

// newFixture creates the team and the data the scenarios need on mgmtapi, and gives the bare
// handler the same answers to its GETs. The cases to comment on are opened only when withCases,
// incidents for E18 are ingested only when withIncidents > 0, and the list team is created only
// when withSets > 0, the policy list team only when withPolicies > 0.
func newFixture(ctx context.Context, m *mgmtapiProcess, bareURL string, withCases bool, withIncidents, withSets, withPolicies int) (*fixture, error) {
	f := &fixture{run: strconv.FormatInt(time.Now().UnixNano(), 36)}
	var err error
	if f.key, err = createTeam(ctx, m, "mgmtload-"+f.run); err != nil {
		return nil, err
	}

	var created struct {
		ID string `json:"id"`
	}
	if err := call(ctx, m.baseURL, f.key, "POST", recordingRuleSetsPath, json.RawMessage(f.createSet(0, 0).body), &created); err != nil {
		return nil, err
	}
	f.setPath = recordingRuleSetsPath + "/" + url.PathEscape(created.ID)
	if err := f.mirror(ctx, m, bareURL, f.setPath); err != nil {
		return nil, err
	}

	if withCases {
		for i := range casesToComment {
			alerts := []map[string]any{alert(fmt.Sprintf("%s-case-%d", f.run, i), i)}
			caseID, err := f.ingest(ctx, m, fmt.Sprintf("mgmtload-case-%d", i), alerts)
			if err != nil {
				return nil, err
			}
			if caseID == "" {
				return nil, errors.New("ingest: a notification of a new group opened no case")
			}
			f.caseIDs = append(f.caseIDs, caseID)
		}
	}

	q := url.Values{}
	q.Set("group_bys[0][incidentField]", "INCIDENTS_FIELDS_APPLICATION_NAME")
	q.Set("group_bys[1][incidentField]", "INCIDENTS_FIELDS_SEVERITY")
	q["filter[severity]"] = []string{"INCIDENT_SEVERITY_CRITICAL", "INCIDENT_SEVERITY_WARNING"}
	q.Set("pagination[pageSize]", "100")
	f.aggregationsQuery = aggregationsPath + "?" + q.Encode()
	if withIncidents > 0 {
		const perNotification = 1000
		for start := 0; start < withIncidents; start += perNotification {
			alerts := make([]map[string]any, 0, perNotification)
			for i := start; i < min(start+perNotification, withIncidents); i++ {
				alerts = append(alerts, alert(fmt.Sprintf("%s-%d", f.run, i), i))
			}
			if _, err := f.ingest(ctx, m, fmt.Sprintf("mgmtload-incidents-%d", start/perNotification), alerts); err != nil {
				return nil, err
			}
		}
		if err := f.mirror(ctx, m, bareURL, f.aggregationsQuery); err != nil {
			return nil, err
		}
	}
	if withSets > 0 {
		if f.listKey, err = createTeam(ctx, m, "mgmtload-list-"+f.run); err != nil {
			return nil, err
		}
		if err := f.seedSets(ctx, m, withSets); err != nil {
			return nil, err
		}
		if err := f.mirrorAs(ctx, m, bareURL, f.listKey, recordingRuleSetsPath); err != nil {
			return nil, err
		}
	}
	if withPolicies > 0 {
		if f.policyListKey, err = createTeam(ctx, m, "mgmtload-policies-"+f.run); err != nil {
			return nil, err
		}
		if err := f.seed(ctx, m, f.policyListKey, withPolicies, f.createPolicy); err != nil {
			return nil, err
		}
		f.policyListQuery = policyListPath + "?enabled_only=true&source_type=SOURCE_TYPE_LOGS"
		if err := f.mirrorAs(ctx, m, bareURL, f.policyListKey, f.policyListQuery); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// createTeam creates a team through the operator key and returns its API key.
func createTeam(ctx context.Context, m *mgmtapiProcess, name string) (string, error) {
	var team struct {
		APIKey struct {
			Value string `json:"value"`
		} `json:"apiKey"`
	}
	if err := call(ctx, m.baseURL, m.operatorKey, "POST", adminTeamsPath, map[string]any{"name": name}, &team); err != nil {
		return "", fmt.Errorf("create the team %s: %w", name, err)
	}
	return team.APIKey.Value, nil
}

// seedSets creates n recording-rule sets in the list team, eight at a time.
func (f *fixture) seedSets(ctx context.Context, m *mgmtapiProcess, n int) error {
	return f.seed(ctx, m, f.listKey, n, f.createSet)
}

// seed sends n create requests made by create with the API key key, eight at a time.
func (f *fixture) seed(ctx context.Context, m *mgmtapiProcess, key string, n int, create nextRequest) error {
	const writers = 8
	errs := make(chan error, writers)
	for w := range writers {
		go func() {
			for seq := w; seq < n; seq += writers {
				req := create(w, seq)
				if err := call(ctx, m.baseURL, key, req.method, req.path, json.RawMessage(req.body), nil); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	var first error
	for range writers {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	return first
}

// mirror reads path on mgmtapi and stores the answer in the bare handler under the same path.
func (f *fixture) mirror(ctx context.Context, m *mgmtapiProcess, bareURL string, path string) error {
	return f.mirrorAs(ctx, m, bareURL, f.key, path)
}

// mirrorAs is mirror with the API key key.
func (f *fixture) mirrorAs(ctx context.Context, m *mgmtapiProcess, bareURL string, key, path string) error {
	var answer json.RawMessage
	if err := call(ctx, m.baseURL, key, "GET", path, nil, &answer); err != nil {
		return err
	}
	u, err := url.Parse(path)
	if err != nil {
		return err
	}
	return call(ctx, bareURL, "", "PUT", u.Path, answer, nil)
}

// ingest posts one Alertmanager notification of group groupKey and returns the case it opened.
func (f *fixture) ingest(ctx context.Context, m *mgmtapiProcess, groupKey string, alerts []map[string]any) (string, error) {
	var result struct {
		CaseID string `json:"caseId"`
	}
	notification := map[string]any{
		"version": "4", "groupKey": groupKey + "-" + f.run, "status": "firing", "receiver": "mgmtload",
		"groupLabels": map[string]string{"alertname": "MgmtloadAlert"},
		"alerts":      alerts,
	}
	if err := call(ctx, m.baseURL, f.key, "POST", ingestPath, notification, &result); err != nil {
		return "", fmt.Errorf("ingest: %w", err)
	}
	return result.CaseID, nil
}

// alert is the i-th firing alert of a run, spread over 10 applications, 4 subsystems and 3 severities.
func alert(fingerprint string, i int) map[string]any {
	severities := []string{"critical", "warning", "info"}
	return map[string]any{
		"status": "firing",
		"labels": map[string]string{
			"alertname":       "MgmtloadAlert",
			"applicationName": fmt.Sprintf("app-%d", i%10),
			"subsystemName":   fmt.Sprintf("subsystem-%d", i%4),
			"severity":        severities[i%len(severities)],
		},
		"annotations": map[string]string{"summary": "load test alert"},
		"startsAt":    time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second).Format(time.RFC3339),
		"fingerprint": fingerprint,
	}
}

func (f *fixture) getSet() request { return request{method: "GET", path: f.setPath} }

func (f *fixture) createSet(w, seq int) request {
	body := fmt.Sprintf(`{"name":"load %s w%d #%d","groups":[{"name":"checkout-http","interval":60,"rules":[`+
		`{"record":"service:http_requests:rate5m","expr":"sum by (service) (rate(http_requests_total[5m]))","labels":{"team":"payments"}}]}]}`,
		f.run, w, seq)
	return request{method: "POST", path: recordingRuleSetsPath, body: []byte(body)}
}

func (f *fixture) comment(w, seq int) request {
	body := fmt.Sprintf(`{"text":"Worker %d, comment %d: rolled checkout back; the error rate is recovering."}`, w, seq)
	caseID := f.caseIDs[(w+seq)%len(f.caseIDs)]
	return request{method: "POST", path: casesPath + "/" + url.PathEscape(caseID) + "/comments", body: []byte(body)}
}

// commentOneCase is comment with every request on the fixture's first case: what a hot row
// costs (each comment updates its case's row).
func (f *fixture) commentOneCase(w, seq int) request {
	r := f.comment(w, seq)
	r.path = casesPath + "/" + url.PathEscape(f.caseIDs[0]) + "/comments"
	return r
}

func (f *fixture) createPolicy(w, seq int) request {
	body := fmt.Sprintf(`{"name":"load %s w%d #%d","description":"Debug lines of batch jobs are not kept.",`+
		`"priority":"PRIORITY_TYPE_LOW","applicationRule":{"name":"batch-","ruleTypeId":"RULE_TYPE_ID_START_WITH"},`+
		`"logRules":{"severities":["SEVERITY_DEBUG","SEVERITY_VERBOSE"]}}`, f.run, w, seq)
	return request{method: "POST", path: policiesPath, body: []byte(body)}
}
