package incidents_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apitest"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/incidents"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// TestAggregationsFastPaths checks that the answers E18 reads from incident_counts (no filter;
// grouped by severity or not grouped) and from the label rows alone (one contextual-label
// filter) are exactly those of the generic path, after every kind of write. filter[isMuted]=false
// matches every incident here and forces the generic path. Groupings whose groups E18 pages in
// SQL (by id and by the times) answer what folding every group in Go answers, page by page.
func TestAggregationsFastPaths(t *testing.T) {
	apitest.Engines(t, func(t *testing.T, env *apitest.Env) {
		severities := []oas.IncidentSeverity{oas.IncidentSeverityINCIDENTSEVERITYERROR, oas.IncidentSeverityINCIDENTSEVERITYCRITICAL,
			oas.IncidentSeverityINCIDENTSEVERITYINFO, oas.IncidentSeverityINCIDENTSEVERITYLOW}
		var alerts []struct {
			id string
			al incidents.Alert
		}
		makeAlert := func(i int) incidents.Alert {
			al := alert(fmt.Sprintf("fast-%d", i))
			al.Severity = severities[i%len(severities)]
			al.StartsAt = al.StartsAt.Add(time.Duration(i) * time.Minute)
			al.Labels = map[string]string{"alertname": "A"}
			if i%5 != 0 {
				al.Labels["service"] = fmt.Sprintf("svc-%d", i%3)
			}
			al.MetaLabels = []oas.MetaLabel{{Key: oas.NewOptString("env"), Value: oas.NewOptString([]string{"prod", "staging"}[i%2])}}
			al.Name = fmt.Sprintf("alert-%d", i%3)
			al.ApplicationName = []string{"shop", "web"}[i%2]
			al.SubsystemName = fmt.Sprintf("sub-%d", i%4)
			al.Annotations = map[string]string{"summary": fmt.Sprintf("slow-%d", i%3)}
			if i%4 == 0 {
				al.Annotations["runbook"] = "https://runbooks/" + al.Name
			}
			return al
		}
		for i := 0; i < 24; i++ {
			batch := []incidents.Alert{makeAlert(i)}
			if i%5 == 3 {
				// two incidents of one transaction, created at the same time
				i++
				batch = append(batch, makeAlert(i))
			}
			var ids []string
			err := env.DB.InTx(context.Background(), func(tx *db.Tx) error {
				ids = ids[:0]
				for _, al := range batch {
					id, created, err := incidents.Trigger(context.Background(), tx, al)
					if err != nil || !created {
						return fmt.Errorf("trigger %s: created %v, %v", al.Fingerprint, created, err)
					}
					ids = append(ids, id)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			for k, al := range batch {
				alerts = append(alerts, struct {
					id string
					al incidents.Alert
				}{ids[k], al})
			}
			// over several days, for incident_day_rollup
			env.Clock.Advance(5 * time.Hour)
		}
		id := func(i int) string { return alerts[i].id }
		check := func(stage string) {
			t.Helper()
			same := func(fast string) {
				t.Helper()
				got := aggJSON(t, env, fast)
				restore := incidents.GenericAggregations()
				want := aggJSON(t, env, fast)
				restore()
				if got != want {
					t.Fatalf("%s: %q answers\n%s\nthe generic path answers\n%s", stage, fast, got, want)
				}
			}
			bySeverity := "group_bys[0][incidentField]=INCIDENTS_FIELDS_SEVERITY"
			label := "filter[contextualLabels][service][contextualLabelValues]=svc-1"
			for _, q := range []string{
				"", bySeverity, bySeverity + "&group_bys[0][orderByDirection]=ORDER_BY_DIRECTION_DESC",
				bySeverity + "&group_bys[1][incidentField]=INCIDENTS_FIELDS_SEVERITY",
				bySeverity + "&pagination[pageSize]=2",
				label, label + "&" + bySeverity,
				label + "&group_bys[0][incidentField]=INCIDENTS_FIELDS_STATE&group_bys[1][incidentField]=INCIDENTS_FIELDS_STATUS&group_bys[1][orderByDirection]=ORDER_BY_DIRECTION_DESC",
				"filter[contextualLabels][service][contextualLabelValues][0]=svc-0&filter[contextualLabels][service][contextualLabelValues][1]=svc-2&" + bySeverity,
				label + "&filter[severity]=INCIDENT_SEVERITY_ERROR&filter[state]=INCIDENT_STATE_TRIGGERED",
				label + "&filter[status]=INCIDENT_STATUS_ACKNOWLEDGED&filter[status]=INCIDENT_STATUS_RESOLVED",
				label + "&filter[assignee]=bob",
				"filter[contextualLabels][service][contextualLabelValues]=nope",
			} {
				same(q)
			}
			// Groupings by one contextual label and the fields of incident_rollup, under filters on
			// that label and its columns, read incident_label_rollup; without a filter on the label,
			// only when no matching incident lacks it (alertname; service is missing on some).
			for _, by := range []string{"", "group_bys[0][contextualLabel]=service", "group_bys[0][contextualLabel]=alertname",
				"group_bys[0][contextualLabel]=service&group_bys[0][orderByDirection]=ORDER_BY_DIRECTION_DESC&group_bys[1][incidentField]=INCIDENTS_FIELDS_NAME",
				"group_bys[0][incidentField]=INCIDENTS_FIELDS_STATUS&group_bys[1][contextualLabel]=alertname&pagination[pageSize]=2",
				"group_bys[0][incidentField]=INCIDENTS_FIELDS_SUBSYSTEM_NAME&group_bys[1][contextualLabel]=service",
				"group_bys[0][incidentField]=INCIDENTS_FIELDS_NAME"} {
				for _, f := range []string{"", label, "filter[contextualLabels][service][contextualLabelValues][0]=svc-0&filter[contextualLabels][service][contextualLabelValues][1]=svc-2",
					label + "&filter[severity]=INCIDENT_SEVERITY_ERROR", label + "&filter[state]=INCIDENT_STATE_RESOLVED&filter[assignee]=bob",
					"filter[searchQuery][contextualLabel]=service&filter[searchQuery][query]=SVC-",
					"filter[searchQuery][contextualLabel]=service&filter[searchQuery][query]=1&" + label,
					"filter[searchQuery][contextualLabel]=alertname&filter[searchQuery][query]=a&filter[status]=INCIDENT_STATUS_TRIGGERED",
					"filter[subsystemName]=sub-1", "filter[metaLabels][0][value]=prod&filter[isMuted]=false",
					"filter[contextualLabels][service][contextualLabelValues]=nope",
					"filter[contextualLabels][alertname][contextualLabelValues]=A&filter[subsystemName]=sub-3"} {
					switch {
					case by == "":
						same(f)
					case f == "":
						same(by)
					default:
						same(by + "&" + f)
					}
				}
			}
			// Groupings by the fields of incident_rollup, under filters on its columns, read it.
			for _, by := range []string{"", bySeverity, "group_bys[0][incidentField]=INCIDENTS_FIELDS_NAME",
				"group_bys[0][incidentField]=INCIDENTS_FIELDS_STATE", "group_bys[0][incidentField]=INCIDENTS_FIELDS_STATUS&group_bys[0][orderByDirection]=ORDER_BY_DIRECTION_DESC",
				"group_bys[0][incidentField]=INCIDENTS_FIELDS_APPLICATION_NAME",
				"group_bys[0][incidentField]=INCIDENTS_FIELDS_SUBSYSTEM_NAME&pagination[pageSize]=2",
				"group_bys[0][incidentField]=INCIDENTS_FIELDS_NAME&group_bys[1][incidentField]=INCIDENTS_FIELDS_STATUS&group_bys[1][orderByDirection]=ORDER_BY_DIRECTION_DESC",
				"group_bys[0][incidentField]=INCIDENTS_FIELDS_SEVERITY&group_bys[1][incidentField]=INCIDENTS_FIELDS_STATE&group_bys[2][incidentField]=INCIDENTS_FIELDS_SUBSYSTEM_NAME"} {
				for _, f := range []string{"", "filter[isMuted]=false", "filter[isMuted]=true", "filter[severity]=INCIDENT_SEVERITY_ERROR",
					"filter[state]=INCIDENT_STATE_RESOLVED", "filter[status]=INCIDENT_STATUS_ACKNOWLEDGED&filter[status]=INCIDENT_STATUS_RESOLVED",
					"filter[assignee]=bob", "filter[applicationName]=shop", "filter[subsystemName]=sub-1&filter[subsystemName]=sub-2",
					"filter[metaLabels][0][key]=env&filter[metaLabels][0][value]=prod",
					"filter[metaLabels][0][value]=staging&filter[metaLabels][1][key]=nope&filter[metaLabelsOp]=FILTER_OPERATOR_AND",
					"filter[searchQuery][query]=ALERT-1&filter[searchQuery][incidentField]=INCIDENTS_FIELDS_NAME",
					"filter[searchQuery][query]=sub-&filter[searchQuery][incidentField]=INCIDENTS_FIELDS_SUBSYSTEM_NAME&filter[state]=INCIDENT_STATE_TRIGGERED"} {
					switch {
					case by == "":
						same(f)
					case f == "":
						same(by)
					default:
						same(by + "&" + f)
					}
				}
			}
			// Groupings by a field with a value per incident page their groups in SQL; they
			// answer what folding every group in Go answers, on every page.
			samePaged := func(q string) {
				t.Helper()
				for page := 0; page < 20; page++ {
					paged := aggs(t, env, q)
					restore := incidents.FoldEveryGroup()
					folded := aggs(t, env, q)
					restore()
					got, _ := json.Marshal(paged)
					want, _ := json.Marshal(folded)
					if string(got) != string(want) {
						t.Fatalf("%s: %q (page %d) paged in SQL answers\n%s\nfolding every group answers\n%s", stage, q, page, got, want)
					}
					if paged.Pagination.NextPageToken == "" {
						return
					}
					q = strings.Split(q, "&pagination[pageToken]=")[0] + "&pagination[pageToken]=" + paged.Pagination.NextPageToken
				}
				t.Fatalf("%s: %q: more than 20 pages", stage, q)
			}
			desc := func(i int) string {
				return fmt.Sprintf("&group_bys[%d][orderByDirection]=ORDER_BY_DIRECTION_DESC", i)
			}
			for _, field := range []string{"ID", "CREATED_TIME", "CLOSED_TIME", "LAST_STATE_UPDATE_TIME"} {
				by := "group_bys[0][incidentField]=INCIDENTS_FIELDS_" + field
				for _, q := range []string{
					by, by + desc(0), by + "&pagination[pageSize]=5", by + desc(0) + "&pagination[pageSize]=7",
					by + "&filter[severity]=INCIDENT_SEVERITY_ERROR&pagination[pageSize]=2",
					by + "&" + label + "&pagination[pageSize]=2",
					// a label's values alone or a search in the name alone, by closedAt: counted
					// from incident_value_closed_times
					by + desc(0) + "&filter[searchQuery][query]=ALERT-&filter[searchQuery][incidentField]=INCIDENTS_FIELDS_NAME&pagination[pageSize]=3",
					by + "&filter[searchQuery][query]=t-1&filter[searchQuery][incidentField]=INCIDENTS_FIELDS_NAME",
					by + desc(0) + "&filter[searchQuery][contextualLabel]=service&filter[searchQuery][query]=VC-&pagination[pageSize]=4",
					by + "&filter[contextualLabels][service][contextualLabelValues][0]=svc-0&filter[contextualLabels][service][contextualLabelValues][1]=svc-2&pagination[pageSize]=3",
					by + "&filter[contextualLabels][alertname][contextualLabelValues]=A&pagination[pageSize]=5",
					by + "&filter[isMuted]=false&filter[status]=INCIDENT_STATUS_RESOLVED",
					by + desc(0) + "&filter[state]=INCIDENT_STATE_TRIGGERED&pagination[pageSize]=3",
					by + "&filter[searchQuery][contextualLabel]=service&filter[searchQuery][query]=VC-2&filter[status]=INCIDENT_STATUS_RESOLVED&pagination[pageSize]=2",
					"group_bys[0][incidentField]=INCIDENTS_FIELDS_NAME&group_bys[1][incidentField]=INCIDENTS_FIELDS_" + field + desc(1) +
						"&" + label + "&filter[searchQuery][contextualLabel]=service&filter[searchQuery][query]=1&pagination[pageSize]=3",
					by + "&filter[applicationName]=shop&filter[applicationName]=web&pagination[pageSize]=4",
					"group_bys[0][incidentField]=INCIDENTS_FIELDS_SEVERITY&group_bys[1][incidentField]=INCIDENTS_FIELDS_" + field + desc(1) + "&pagination[pageSize]=4",
					"group_bys[0][contextualLabel]=service" + desc(0) + "&group_bys[1][incidentField]=INCIDENTS_FIELDS_" + field + "&pagination[pageSize]=3",
					by + "&group_bys[1][incidentField]=INCIDENTS_FIELDS_CLOSED_TIME" + desc(1) + "&group_bys[2][incidentField]=INCIDENTS_FIELDS_STATUS&pagination[pageSize]=6",
					by + "&filter[contextualLabels][service][contextualLabelValues]=nope",
				} {
					samePaged(q)
				}
				// under a label filter, the page's times sorted from the label rows instead of
				// walked in the time's index
				restore := incidents.NoPageWalk()
				samePaged(by + desc(0) + "&" + label + "&pagination[pageSize]=2")
				samePaged(by + "&" + label + "&filter[status]=INCIDENT_STATUS_RESOLVED&pagination[pageSize]=3")
				restore()
				// a page token beyond the last group
				if tok := pageTokenAt(t, env, by+"&pagination[pageSize]=1", 1000); tok != "" {
					samePaged(by + "&pagination[pageSize]=3&pagination[pageToken]=" + tok)
				}
			}
			// Display-label filters read the label's rows (incident_display_labels): they select
			// the incidents whose stored display labels have the key and one of the values.
			for _, f := range []struct {
				query, key string
				values     []string
			}{
				{"filter[displayLabels][summary][displayLabelValues]=slow-1", "summary", []string{"slow-1"}},
				{"filter[displayLabels][summary][displayLabelValues][0]=slow-0&filter[displayLabels][summary][displayLabelValues][1]=slow-2", "summary", []string{"slow-0", "slow-2"}},
				{"filter[displayLabels][runbook][displayLabelValues]=https://runbooks/alert-0", "runbook", []string{"https://runbooks/alert-0"}},
				{"filter[displayLabels][summary][displayLabelValues]=nope", "summary", []string{"nope"}},
			} {
				var n int
				for _, g := range aggs(t, env, f.query).IncidentAggs {
					n += int(g.AllValuesCount)
				}
				want := 0
				for _, a := range alerts {
					if slices.Contains(f.values, a.al.Annotations[f.key]) {
						want++
					}
				}
				equal(t, stage+": "+f.query+" matches", n, want)
				for _, by := range []string{"", bySeverity, "group_bys[0][incidentField]=INCIDENTS_FIELDS_NAME&filter[state]=INCIDENT_STATE_TRIGGERED",
					"group_bys[0][contextualLabel]=service&" + label} {
					q := f.query
					if by != "" {
						q = by + "&" + q
					}
					same(q)
				}
				samePaged("group_bys[0][incidentField]=INCIDENTS_FIELDS_CREATED_TIME&pagination[pageSize]=4&" + f.query)
				samePaged("group_bys[0][incidentField]=INCIDENTS_FIELDS_ID&pagination[pageSize]=3&filter[status]=INCIDENT_STATUS_TRIGGERED&" + f.query)
			}
			// createdAt and duration ranges read incident_day_rollup's whole days and the incidents
			// of the partial days: aligned, unaligned, within one day, empty, both ranges at once.
			var firstMicros int64
			if err := env.DB.Read().QueryRowContext(context.Background(), `SELECT MIN(created_at) FROM incidents WHERE team_id = 1`).Scan(&firstMicros); err != nil {
				t.Fatal(err)
			}
			day0 := time.UnixMicro(firstMicros).UTC().Truncate(24 * time.Hour)
			at := func(h float64) string {
				return day0.Add(time.Duration(h * float64(time.Hour))).Format(time.RFC3339Nano)
			}
			var ranges []string
			for _, b := range [][2]float64{{24, 72}, {0, 240}, {7, 50}, {13.5, 14.25}, {30, 30}, {40, 20}, {-48, 26}, {-1, 500}} {
				ranges = append(ranges,
					"filter[createdAtRange][startTime]="+at(b[0])+"&filter[createdAtRange][endTime]="+at(b[1]),
					"filter[incidentDurationRange][startTime]="+at(b[0])+"&filter[incidentDurationRange][endTime]="+at(b[1]))
			}
			// starting just after an incident closed, on the day it closed
			closedAt := sqlRows(t, env, `SELECT COALESCE(MIN(closed_at), 0), COALESCE(MAX(closed_at), 0) FROM incidents WHERE team_id = 1`)
			var closedBounds [2]int64
			if _, err := fmt.Sscanf(strings.Trim(closedAt, "[]"), "%d,%d", &closedBounds[0], &closedBounds[1]); err != nil {
				t.Fatalf("closed times %s: %v", closedAt, err)
			}
			for _, c := range closedBounds {
				if c == 0 {
					continue
				}
				start := time.UnixMicro(c).UTC().Add(time.Second)
				ranges = append(ranges, "filter[incidentDurationRange][startTime]="+start.Format(time.RFC3339Nano)+
					"&filter[incidentDurationRange][endTime]="+start.Add(72*time.Hour).Format(time.RFC3339Nano))
			}
			ranges = append(ranges,
				"filter[createdAtRange][startTime]="+at(5)+"&filter[createdAtRange][endTime]="+at(100)+
					"&filter[incidentDurationRange][startTime]="+at(30.5)+"&filter[incidentDurationRange][endTime]="+at(72))
			for _, r := range ranges {
				for _, by := range []string{"", bySeverity, "group_bys[0][incidentField]=INCIDENTS_FIELDS_NAME&group_bys[1][incidentField]=INCIDENTS_FIELDS_STATUS",
					"group_bys[0][incidentField]=INCIDENTS_FIELDS_SUBSYSTEM_NAME&filter[state]=INCIDENT_STATE_TRIGGERED",
					"group_bys[0][incidentField]=INCIDENTS_FIELDS_APPLICATION_NAME&filter[assignee]=bob&filter[metaLabels][0][value]=prod",
					// one contextual label: incident_label_day_rollup's whole days (when no matching
					// incident lacks the label: alertname; service is missing on some)
					"group_bys[0][contextualLabel]=alertname", "group_bys[0][contextualLabel]=service",
					"group_bys[0][contextualLabel]=alertname" + "&group_bys[1][incidentField]=INCIDENTS_FIELDS_NAME&group_bys[1][orderByDirection]=ORDER_BY_DIRECTION_DESC",
					"group_bys[0][incidentField]=INCIDENTS_FIELDS_STATUS&group_bys[1][contextualLabel]=service&" + label,
					"group_bys[0][contextualLabel]=service&filter[searchQuery][contextualLabel]=service&filter[searchQuery][query]=VC-&filter[state]=INCIDENT_STATE_TRIGGERED",
					"group_bys[0][incidentField]=INCIDENTS_FIELDS_SEVERITY&filter[contextualLabels][service][contextualLabelValues][0]=svc-0&filter[contextualLabels][service][contextualLabelValues][1]=svc-2",
					"group_bys[0][contextualLabel]=alertname&filter[subsystemName]=sub-1&filter[subsystemName]=sub-2"} {
					q := r
					if by != "" {
						q = by + "&" + r
					}
					same(q)
				}
				samePaged("group_bys[0][incidentField]=INCIDENTS_FIELDS_ID&pagination[pageSize]=5&" + r)
				samePaged("group_bys[0][incidentField]=INCIDENTS_FIELDS_CREATED_TIME&pagination[pageSize]=3&" + r)
				samePaged("group_bys[0][incidentField]=INCIDENTS_FIELDS_ID&filter[severity]=INCIDENT_SEVERITY_ERROR&" + r)
				// grouped by the last update under ranges: paged within the day rows' bounds
				samePaged("group_bys[0][incidentField]=INCIDENTS_FIELDS_LAST_STATE_UPDATE_TIME&pagination[pageSize]=3&" + r)
				samePaged("group_bys[0][incidentField]=INCIDENTS_FIELDS_LAST_STATE_UPDATE_TIME" + desc(0) + "&filter[state]=INCIDENT_STATE_TRIGGERED&pagination[pageSize]=2&" + r)
				// grouped by closedAt under ranges alone: counted from incident_closed_day_times
				samePaged("group_bys[0][incidentField]=INCIDENTS_FIELDS_CLOSED_TIME&pagination[pageSize]=3&" + r)
				samePaged("group_bys[0][incidentField]=INCIDENTS_FIELDS_CLOSED_TIME" + desc(0) + "&pagination[pageSize]=2&" + r)
				samePaged("group_bys[0][incidentField]=INCIDENTS_FIELDS_CLOSED_TIME" + desc(0) + "&" + r)
			}
			// Driven from the label rows, many groups read their ids in one query; a search of the
			// same label selects the same incidents from the incidents and reads them per group.
			allServices := "filter[contextualLabels][service][contextualLabelValues][0]=svc-0&filter[contextualLabels][service][contextualLabelValues][1]=svc-1&filter[contextualLabels][service][contextualLabelValues][2]=svc-2"
			searched := "filter[searchQuery][contextualLabel]=service&filter[searchQuery][query]=svc-"
			restore := incidents.FoldEveryGroup()
			for _, by := range []string{"group_bys[0][incidentField]=INCIDENTS_FIELDS_ID", "group_bys[0][incidentField]=INCIDENTS_FIELDS_ID&pagination[pageSize]=10",
				"group_bys[0][incidentField]=INCIDENTS_FIELDS_STATUS&group_bys[1][incidentField]=INCIDENTS_FIELDS_CREATED_TIME" + desc(1),
				"group_bys[0][incidentField]=INCIDENTS_FIELDS_NAME"} {
				if got, want := aggJSON(t, env, by+"&"+allServices), aggJSON(t, env, by+"&"+searched); got != want {
					restore()
					t.Fatalf("%s: %q from the label rows answers\n%s\nfrom the incidents\n%s", stage, by, got, want)
				}
			}
			restore()
			// the counts kept on write are what the incidents say
			gotCounts := sqlRows(t, env, `SELECT severity, state, status, assigned_to, meta_labels, n FROM incident_counts
				WHERE team_id = 1 AND n > 0 ORDER BY severity, state, status, assigned_to, meta_labels`)
			wantCounts := sqlRows(t, env, `SELECT severity, state, status, assigned_to, meta_labels, COUNT(*) FROM incidents
				WHERE team_id = 1 GROUP BY severity, state, status, assigned_to, meta_labels ORDER BY severity, state, status, assigned_to, meta_labels`)
			equal(t, stage+": incident_counts", gotCounts, wantCounts)
			equal(t, stage+": no empty counts", sqlRows(t, env, `SELECT COUNT(*) FROM incident_counts WHERE n <= 0`), "[[0]]")
			checkRollups(t, env, stage)
			// the label rows carry the incident's columns
			stale := sqlRows(t, env, `SELECT COUNT(*) FROM incident_labels l JOIN incidents i ON i.team_id = l.team_id AND i.id = l.incident_id
				WHERE l.severity <> i.severity OR l.state <> i.state OR l.status <> i.status OR l.assigned_to <> i.assigned_to
				OR l.meta_labels <> i.meta_labels OR l.created_at <> i.created_at OR l.last_state_update_time <> i.last_state_update_time
				OR (l.closed_at IS NULL) <> (i.closed_at IS NULL) OR l.closed_at <> i.closed_at OR l.name <> i.name
				OR l.application_name <> i.application_name OR l.subsystem_name <> i.subsystem_name OR l.is_muted <> i.is_muted`)
			equal(t, stage+": stale label rows", stale, "[[0]]")
		}
		check("triggered")

		var out incidentsOut
		decode(t, env.JSON(t, "POST", ackPath, env.RootKey, ids(id(0), id(1), id(2), id(5))), &out)
		env.Clock.Advance(time.Second)
		decode(t, env.JSON(t, "POST", resolvePth, env.RootKey, ids(id(2), id(3), id(7))), &out)
		env.Clock.Advance(time.Second)
		decode(t, env.JSON(t, "POST", closePath, env.RootKey, ids(id(4), id(5), id(9))), &out)
		env.Clock.Advance(time.Second)
		decode(t, env.JSON(t, "POST", assignPath, env.RootKey, `{"incidentIds":["`+id(1)+`","`+id(4)+`","`+id(6)+`","`+id(10)+`"],"assignedTo":{"userId":"bob"}}`), &out)
		decode(t, env.JSON(t, "POST", assignPath, env.RootKey, `{"incidentIds":["`+id(6)+`","`+id(11)+`"],"assignedTo":{"userId":"amy"}}`), &out)
		check("after lifecycle")

		// the source resolves: an open one, a closed one (keeps closedAt), an acknowledged one;
		// then a redelivery; then a redelivered trigger
		for _, i := range []int{8, 9, 1, 13} {
			resolveFromSource(t, env, alerts[i].al, alerts[i].al.StartsAt.Add(time.Hour))
			env.Clock.Advance(time.Second)
		}
		_, _, changed := resolveFromSource(t, env, alerts[8].al, alerts[8].al.StartsAt.Add(2*time.Hour))
		equal(t, "redelivered resolve", changed, false)
		_, created := trigger(t, env, alerts[8].al)
		equal(t, "redelivered trigger", created, false)
		decode(t, env.JSON(t, "DELETE", assignPath+"?incident_ids="+id(1)+"&incident_ids="+id(6)+"&incident_ids="+id(12), env.RootKey, ""), &out)
		decode(t, env.JSON(t, "POST", closePath, env.RootKey, ids(id(10), id(14))), &out)
		check("after source resolves and unassign")

		// a severity whose incidents all move to another state and status
		for i := 0; i < len(alerts); i += len(severities) {
			decode(t, env.JSON(t, "POST", closePath, env.RootKey, ids(id(i))), &out)
		}
		check("one severity closed")
	})
}

// pageTokenAt is query's page token moved to offset ("" when query has one page).
func pageTokenAt(t *testing.T, env *apitest.Env, query string, offset int) string {
	t.Helper()
	tok := aggs(t, env, query).Pagination.NextPageToken
	if tok == "" {
		return ""
	}
	raw, err := base64.RawURLEncoding.DecodeString(tok)
	if err != nil {
		t.Fatalf("page token %q: %v", tok, err)
	}
	_, hash, _ := strings.Cut(string(raw), ":")
	return base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprintf("%d:%s", offset, hash)))
}

// aggJSON is E18's answer, re-encoded so that answers compare as strings (a page token only
// says whether there is one: it belongs to its query).
func aggJSON(t *testing.T, env *apitest.Env, query string) string {
	t.Helper()
	out := aggs(t, env, query)
	if out.Pagination.NextPageToken != "" {
		out.Pagination.NextPageToken = "set"
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// sqlRows runs a query on the read pool and renders its rows.
func sqlRows(t *testing.T, env *apitest.Env, query string) string {
	t.Helper()
	rows, err := env.DB.Read().QueryContext(context.Background(), query)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var all [][]any
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = string(b)
			}
		}
		all = append(all, vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(all)
	return string(b)
}

// checkRollups checks that incident_rollup, incident_label_rollup, incident_day_rollup and
// incident_label_day_rollup, kept on
// write, are what the incidents say, times included, and that incident_display_labels holds each incident's display
// labels.
func checkRollups(t *testing.T, env *apitest.Env, stage string) {
	t.Helper()
	gotRollup := sqlRows(t, env, `SELECT name, application_name, subsystem_name, severity, state, status, assigned_to,
		meta_labels, is_muted, n, first_created, last_closed, last_update FROM incident_rollup WHERE team_id = 1
		ORDER BY name, application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted`)
	wantRollup := sqlRows(t, env, `SELECT name, application_name, subsystem_name, severity, state, status, assigned_to,
		meta_labels, is_muted, COUNT(*), MIN(created_at), MAX(closed_at), MAX(last_state_update_time) FROM incidents
		WHERE team_id = 1 GROUP BY name, application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted
		ORDER BY name, application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted`)
	equal(t, stage+": incident_rollup", gotRollup, wantRollup)
	gotLabelRollup := sqlRows(t, env, `SELECT key, value, name, application_name, subsystem_name, severity, state, status,
		assigned_to, meta_labels, is_muted, n, first_created, last_closed, last_update FROM incident_label_rollup WHERE team_id = 1
		ORDER BY key, value, name, application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted`)
	wantLabelRollup := sqlRows(t, env, `SELECT l.key, l.value, i.name, i.application_name, i.subsystem_name, i.severity, i.state,
		i.status, i.assigned_to, i.meta_labels, i.is_muted, COUNT(*), MIN(i.created_at), MAX(i.closed_at), MAX(i.last_state_update_time)
		FROM incident_labels l JOIN incidents i ON i.team_id = l.team_id AND i.id = l.incident_id WHERE l.team_id = 1
		GROUP BY l.key, l.value, i.name, i.application_name, i.subsystem_name, i.severity, i.state, i.status, i.assigned_to,
		i.meta_labels, i.is_muted
		ORDER BY l.key, l.value, i.name, i.application_name, i.subsystem_name, i.severity, i.state, i.status, i.assigned_to,
		i.meta_labels, i.is_muted`)
	equal(t, stage+": incident_label_rollup", gotLabelRollup, wantLabelRollup)
	gotDays := sqlRows(t, env, `SELECT created_day, closed_day, name, application_name, subsystem_name, severity, state, status,
		assigned_to, meta_labels, is_muted, n, first_created, last_closed, last_update FROM incident_day_rollup WHERE team_id = 1
		ORDER BY created_day, closed_day, name, application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted`)
	wantDays := sqlRows(t, env, `SELECT created_at - created_at % 86400000000 AS d, COALESCE(closed_at - closed_at % 86400000000, -1) AS c,
		name, application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted,
		COUNT(*), MIN(created_at), MAX(closed_at), MAX(last_state_update_time) FROM incidents WHERE team_id = 1
		GROUP BY created_at - created_at % 86400000000, COALESCE(closed_at - closed_at % 86400000000, -1), name, application_name,
			subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted
		ORDER BY d, c, name, application_name, subsystem_name, severity, state, status, assigned_to, meta_labels, is_muted`)
	equal(t, stage+": incident_day_rollup", gotDays, wantDays)
	// first_update is a lower bound of each day row's last updates, not below its day of creation
	// (where every incident of the row starts): the rows where it is not
	equal(t, stage+": incident_day_rollup first_update", sqlRows(t, env, `SELECT r.created_day, r.closed_day, r.name, r.state,
		r.first_update, MIN(i.last_state_update_time) FROM incident_day_rollup r JOIN incidents i ON i.team_id = r.team_id
			AND i.created_at - i.created_at % 86400000000 = r.created_day
			AND COALESCE(i.closed_at - i.closed_at % 86400000000, -1) = r.closed_day AND i.name = r.name
			AND i.application_name = r.application_name AND i.subsystem_name = r.subsystem_name AND i.severity = r.severity
			AND i.state = r.state AND i.status = r.status AND i.assigned_to = r.assigned_to AND i.meta_labels = r.meta_labels
			AND i.is_muted = r.is_muted
		WHERE r.team_id = 1 GROUP BY r.created_day, r.closed_day, r.name, r.application_name, r.subsystem_name, r.severity,
			r.state, r.status, r.assigned_to, r.meta_labels, r.is_muted, r.first_update
		HAVING r.first_update IS NULL OR r.first_update < r.created_day OR r.first_update > MIN(i.last_state_update_time)`), "null")
	gotLabelDays := sqlRows(t, env, `SELECT key, value, created_day, closed_day, name, application_name, subsystem_name, severity,
		state, status, assigned_to, meta_labels, is_muted, n, first_created, last_closed, last_update FROM incident_label_day_rollup
		WHERE team_id = 1 ORDER BY key, value, created_day, closed_day, name, application_name, subsystem_name, severity, state,
		status, assigned_to, meta_labels, is_muted`)
	wantLabelDays := sqlRows(t, env, `SELECT l.key, l.value, i.created_at - i.created_at % 86400000000 AS d,
		COALESCE(i.closed_at - i.closed_at % 86400000000, -1) AS c, i.name, i.application_name, i.subsystem_name, i.severity,
		i.state, i.status, i.assigned_to, i.meta_labels, i.is_muted,
		COUNT(*), MIN(i.created_at), MAX(i.closed_at), MAX(i.last_state_update_time)
		FROM incident_labels l JOIN incidents i ON i.team_id = l.team_id AND i.id = l.incident_id WHERE l.team_id = 1
		GROUP BY l.key, l.value, i.created_at - i.created_at % 86400000000, COALESCE(i.closed_at - i.closed_at % 86400000000, -1),
			i.name, i.application_name, i.subsystem_name, i.severity, i.state, i.status, i.assigned_to, i.meta_labels, i.is_muted
		ORDER BY l.key, l.value, d, c, i.name, i.application_name, i.subsystem_name, i.severity, i.state, i.status,
			i.assigned_to, i.meta_labels, i.is_muted`)
	equal(t, stage+": incident_label_day_rollup", gotLabelDays, wantLabelDays)
	// every shared creation time is listed, and only those (creation times never change); every
	// shared last update is listed (a time listed that is no longer shared is harmless)
	equal(t, stage+": created ties", sqlRows(t, env, `SELECT at FROM incident_time_ties WHERE team_id = 1 AND field = 'created' ORDER BY at`),
		sqlRows(t, env, `SELECT created_at FROM incidents WHERE team_id = 1 GROUP BY created_at HAVING COUNT(*) > 1 ORDER BY created_at`))
	equal(t, stage+": updated ties missing", sqlRows(t, env, `SELECT last_state_update_time FROM incidents WHERE team_id = 1
		GROUP BY last_state_update_time HAVING COUNT(*) > 1
		EXCEPT SELECT at FROM incident_time_ties WHERE team_id = 1 AND field = 'updated'`), "null")
	gotDisplay := sqlRows(t, env, `SELECT incident_id, key, value FROM incident_display_labels WHERE team_id = 1
		ORDER BY incident_id, key`)
	each := `json_each(i.display_labels)`
	if env.DB.Engine == db.Postgres {
		each = `jsonb_each_text(i.display_labels::jsonb)`
	}
	wantDisplay := sqlRows(t, env, `SELECT i.id, d.key, d.value FROM incidents i, `+each+` d WHERE i.team_id = 1
		ORDER BY i.id, d.key`)
	equal(t, stage+": incident_display_labels", gotDisplay, wantDisplay)
	// the distinct closedAt values per day of creation and day of close, and the times shared
	// across days of creation with each such day
	equal(t, stage+": incident_closed_day_times", sqlRows(t, env, `SELECT created_day, closed_day, n FROM incident_closed_day_times
		WHERE team_id = 1 ORDER BY created_day, closed_day`),
		sqlRows(t, env, `SELECT created_at - created_at % 86400000000 AS d, closed_at - closed_at % 86400000000 AS c,
			COUNT(DISTINCT closed_at) FROM incidents WHERE team_id = 1 AND closed_at IS NOT NULL
			GROUP BY created_at - created_at % 86400000000, closed_at - closed_at % 86400000000 ORDER BY d, c`))
	equal(t, stage+": incident_closed_day_ties", sqlRows(t, env, `SELECT closed_at, created_day, closed_day FROM incident_closed_day_ties
		WHERE team_id = 1 ORDER BY closed_at, created_day`),
		sqlRows(t, env, `SELECT DISTINCT i.closed_at, i.created_at - i.created_at % 86400000000 AS d, i.closed_at - i.closed_at % 86400000000
			FROM incidents i WHERE i.team_id = 1 AND i.closed_at IN (SELECT closed_at FROM incidents WHERE team_id = 1
				AND closed_at IS NOT NULL GROUP BY closed_at HAVING COUNT(DISTINCT created_at - created_at % 86400000000) > 1)
			ORDER BY i.closed_at, d`))
	// per contextual label value, the distinct closedAt values and the closed incidents of the
	// incidents that carry it, and the times shared across values of one key with each such value
	equal(t, stage+": incident_value_closed_times", sqlRows(t, env, `SELECT field, key, value, n, closed FROM incident_value_closed_times
		WHERE team_id = 1 ORDER BY field, key, value`),
		sqlRows(t, env, `SELECT * FROM (SELECT 'label' AS f, l.key AS k, l.value AS v, COUNT(DISTINCT i.closed_at), COUNT(*) FROM incident_labels l
			JOIN incidents i ON i.team_id = l.team_id AND i.id = l.incident_id WHERE l.team_id = 1 AND i.closed_at IS NOT NULL
			GROUP BY l.key, l.value
			UNION ALL SELECT 'name', '', name, COUNT(DISTINCT closed_at), COUNT(*) FROM incidents WHERE team_id = 1 AND closed_at IS NOT NULL
			GROUP BY name) AS x ORDER BY f, k, v`))
	equal(t, stage+": incident_value_closed_ties", sqlRows(t, env, `SELECT field, key, closed_at, value FROM incident_value_closed_ties
		WHERE team_id = 1 ORDER BY field, key, closed_at, value`),
		sqlRows(t, env, `SELECT * FROM (SELECT DISTINCT 'label' AS f, l.key AS k, i.closed_at AS c, l.value AS v FROM incident_labels l
			JOIN incidents i ON i.team_id = l.team_id AND i.id = l.incident_id WHERE l.team_id = 1 AND i.closed_at IS NOT NULL
			AND EXISTS (SELECT 1 FROM incident_labels m JOIN incidents j ON j.team_id = m.team_id AND j.id = m.incident_id
				WHERE m.team_id = 1 AND m.key = l.key AND j.closed_at = i.closed_at AND m.value <> l.value)
			UNION ALL SELECT DISTINCT 'name', '', i.closed_at, i.name FROM incidents i WHERE i.team_id = 1 AND i.closed_at IS NOT NULL
			AND EXISTS (SELECT 1 FROM incidents j WHERE j.team_id = 1 AND j.closed_at = i.closed_at AND j.name <> i.name)) AS x
			ORDER BY f, k, c, v`))
	// the number of distinct closedAt values
	equal(t, stage+": incident_closed_times", sqlRows(t, env, `SELECT CAST(COALESCE(SUM(n), 0) AS BIGINT) FROM incident_closed_times WHERE team_id = 1`),
		sqlRows(t, env, `SELECT COUNT(DISTINCT closed_at) FROM incidents WHERE team_id = 1`))
}
