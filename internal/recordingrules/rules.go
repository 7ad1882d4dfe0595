package recordingrules

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// promql parses rule expressions with the default function set, as a Prometheus server with no
// feature flags does.
var promql = parser.NewParser(parser.Options{})

// buildSet checks a set as Prometheus would check a rule file and returns the set to store:
// group ids (from newID) filled in where the caller gave none, versions defaulted to 1, labels
// never null. It reads nothing from the database, so that callers run it before their
// transaction.
//
// Rules beyond the document's bounds (which the generated decoder enforces): group names and ids
// are unique within the set; limit fits in an unsigned 64-bit integer; every record is a valid
// metric name, every label name a valid label name that does not start with "__", and every expr
// valid PromQL. Every failure is an apierror.Invalid naming the group and the rule.
func buildSet(newID func() string, id string, in *oas.RecordingRuleSetInput) (oas.RecordingRuleSet, error) {
	set := oas.RecordingRuleSet{ID: id, Name: in.Name, Groups: make([]oas.RecordingRuleGroup, 0, len(in.Groups))}
	names := make(map[string]int, len(in.Groups))
	ids := make(map[string]int, len(in.Groups))
	for gi, g := range in.Groups {
		where := fmt.Sprintf("groups[%d] (%q)", gi, g.Name)
		if prev, dup := names[g.Name]; dup {
			return set, apierror.Invalidf("%s.name: groups[%d] already has this name; group names must be unique within a set", where, prev)
		}
		names[g.Name] = gi
		groupID := g.ID.Or("")
		if groupID == "" {
			groupID = newID()
		}
		if prev, dup := ids[groupID]; dup {
			return set, apierror.Invalidf("%s.id: groups[%d] already has id %q; group ids must be unique within a set", where, prev, groupID)
		}
		ids[groupID] = gi
		out := oas.RecordingRuleGroup{
			ID:       groupID,
			Name:     g.Name,
			Interval: g.Interval,
			Version:  g.Version.Or(1),
			Rules:    make([]oas.RecordingRule, 0, len(g.Rules)),
		}
		if limit, ok := g.Limit.Get(); ok {
			if _, err := strconv.ParseUint(limit, 10, 64); err != nil {
				return set, apierror.Invalidf("%s.limit: must be at most 18446744073709551615", where)
			}
			out.Limit = oas.NewOptString(limit)
		} else {
			// The service's default (no limit) is answered, as the real service does: clients
			// read the group's limit without checking that it is there.
			out.Limit = oas.NewOptString(DefaultGroupLimit)
		}
		for ri, r := range g.Rules {
			if err := checkRule(fmt.Sprintf("%s.rules[%d]", where, ri), r); err != nil {
				return set, err
			}
			labels := oas.RecordingRuleLabels{}
			for k, v := range r.Labels.Value {
				labels[k] = v
			}
			out.Rules = append(out.Rules, oas.RecordingRule{
				Expr:              r.Expr,
				Record:            r.Record,
				EvaluationDelayMs: r.EvaluationDelayMs,
				Labels:            labels,
			})
		}
		set.Groups = append(set.Groups, out)
	}
	return set, nil
}

// DefaultGroupLimit is a group's limit when it is not given: "0", no limit on the series a rule
// of the group may produce.
const DefaultGroupLimit = "0"

func checkRule(where string, r oas.RecordingRuleInput) error {
	if !model.LegacyValidation.IsValidMetricName(r.Record) {
		return apierror.Invalidf("%s.record: %q is not a valid metric name (letters, digits, '_' and ':', not starting with a digit)", where, r.Record)
	}
	for name := range r.Labels.Value {
		if !model.LegacyValidation.IsValidLabelName(name) {
			return apierror.Invalidf("%s.labels: %q is not a valid label name (letters, digits and '_', not starting with a digit)", where, name)
		}
		if strings.HasPrefix(name, "__") {
			return apierror.Invalidf("%s.labels: %q starts with \"__\", which Prometheus reserves", where, name)
		}
	}
	if _, err := promql.ParseExpr(r.Expr); err != nil {
		return apierror.Invalidf("%s.expr: not valid PromQL: %s", where, oneLine(err.Error()))
	}
	return nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// isEncodedSet reports whether doc begins as the generated encoder writes the set id: {"id":"<id>","name":".
// Ids are made by the server (tx.NewID) and need no escaping; an id that would is never
// reported, and its document takes the decoding path.
func isEncodedSet(doc []byte, id string) bool {
	const before, after = `{"id":"`, `","name":"`
	if len(doc) < len(before)+len(id)+len(after) || string(doc[:len(before)]) != before {
		return false
	}
	rest := doc[len(before):]
	return string(rest[:len(id)]) == id && string(rest[len(id):len(id)+len(after)]) == after
}
