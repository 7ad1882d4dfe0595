package enrichments

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// Limit is the most enrichments a team may hold (GetEnrichmentLimit answers it). The public
// documents give no figure (their examples say 5 and 10); 50 is ours, see docs/decisions.md.
const Limit = 50

// MaxDataSets is the most custom enrichment data sets a team may hold: the public list answers
// at most 30.
const MaxDataSets = 30

// The kinds of enrichment, named as the fields of EnrichmentKind.
const (
	kindGeoIP        = "geoIp"
	kindSuspiciousIP = "suspiciousIp"
	kindAWS          = "aws"
	kindCustom       = "customEnrichment"
)

// kindPermission is the permission that changing an enrichment of each kind needs besides the
// operation's own (geo-enrichment:UpdateConfig), from the public permission catalog.
var kindPermission = map[string]string{
	kindSuspiciousIP: "security-enrichment:UpdateConfig",
	kindAWS:          "cloud-metadata-enrichment:UpdateConfig",
	kindCustom:       "team-custom-enrichment:UpdateConfig",
}

// kindOf returns the kind that k holds (the first set, in the order of the fields; "" for none)
// and, for a custom enrichment, its data set's id.
func kindOf(k oas.EnrichmentKind) (kind string, dataSetID int64) {
	switch {
	case k.GeoIp.Set:
		return kindGeoIP, 0
	case k.SuspiciousIp != nil:
		return kindSuspiciousIP, 0
	case k.AWS.Set:
		return kindAWS, 0
	case k.CustomEnrichment.Set:
		return kindCustom, k.CustomEnrichment.Value.ID.Or(0)
	}
	return "", 0
}

// scopeOf is what an overwrite of e's type replaces: its kind, and for a custom enrichment its
// data set ("customEnrichment:3").
func scopeOf(k oas.EnrichmentKind) string {
	kind, id := kindOf(k)
	if kind == kindCustom {
		return fmt.Sprintf("%s:%d", kind, id)
	}
	return kind
}

// identity is what two enrichments of a team may not share: the field, and what it is enriched
// with (the AWS resource type, the data set).
func identity(e oas.Enrichment) string {
	kind, id := kindOf(e.EnrichmentType)
	switch kind {
	case kindAWS:
		return fmt.Sprintf("%s|%s|%s", e.FieldName, kind, e.EnrichmentType.AWS.Value.ResourceType.Or(""))
	case kindCustom:
		return fmt.Sprintf("%s|%s|%d", e.FieldName, kind, id)
	}
	return e.FieldName + "|" + kind
}

// checkKind applies the type rules to k at path (e.g. "requestEnrichments[0].enrichmentType"):
// exactly one type; aws names its resourceType; customEnrichment names its data set's id.
//
// Errors: Invalid naming the field.
func checkKind(path string, k oas.EnrichmentKind) error {
	var set []string
	if k.GeoIp.Set {
		set = append(set, kindGeoIP)
	}
	if k.SuspiciousIp != nil {
		set = append(set, kindSuspiciousIP)
	}
	if k.AWS.Set {
		set = append(set, kindAWS)
	}
	if k.CustomEnrichment.Set {
		set = append(set, kindCustom)
	}
	switch {
	case len(set) == 0:
		return apierror.Invalidf("%s: one of geoIp, suspiciousIp, aws and customEnrichment is required", path)
	case len(set) > 1:
		return apierror.Invalidf("%s: exactly one of geoIp, suspiciousIp, aws and customEnrichment is allowed, got %s", path, strings.Join(set, " and "))
	}
	if k.AWS.Set && strings.TrimSpace(k.AWS.Value.ResourceType.Or("")) == "" {
		return apierror.Invalidf("%s.aws.resourceType: required, the AWS resource type (e.g. aws:ec2:instance)", path)
	}
	if k.CustomEnrichment.Set && !k.CustomEnrichment.Value.ID.Set {
		return apierror.Invalidf("%s.customEnrichment.id: required, the id of one of the team's custom enrichment data sets", path)
	}
	return nil
}

// checkInput applies every rule to in that reads nothing stored, and returns the enrichment it
// describes (without an id): a fieldName that is not blank; a type (checkKind); selectedColumns
// only for a custom enrichment, each once; each target's dataset given, once. Messages name the
// field after prefix ("requestEnrichments[0]." or "").
//
// Errors: Invalid naming the field.
func checkInput(prefix string, in oas.EnrichmentInput) (oas.Enrichment, error) {
	e := oas.Enrichment{
		FieldName: in.FieldName, EnrichedFieldName: in.EnrichedFieldName, EnrichmentType: in.EnrichmentType,
		SelectedColumns: in.SelectedColumns, Targets: in.Targets,
	}
	if strings.TrimSpace(in.FieldName) == "" {
		return e, apierror.Invalidf("%sfieldName: required, the field to enrich (not blank)", prefix)
	}
	if v, ok := in.EnrichedFieldName.Get(); ok && strings.TrimSpace(v) == "" {
		return e, apierror.Invalidf("%senrichedFieldName: must not be blank; leave it out to write beside the field", prefix)
	}
	if err := checkKind(prefix+"enrichmentType", in.EnrichmentType); err != nil {
		return e, err
	}
	kind, _ := kindOf(in.EnrichmentType)
	if len(in.SelectedColumns) > 0 && kind != kindCustom {
		return e, apierror.Invalidf("%sselectedColumns: only a customEnrichment selects columns; a %s enrichment takes none", prefix, kind)
	}
	for i, c := range in.SelectedColumns {
		if slices.Index(in.SelectedColumns, c) < i {
			return e, apierror.Invalidf("%sselectedColumns[%d]: column %q is listed twice", prefix, i, c)
		}
	}
	for i, t := range in.Targets {
		d, ok := t.Dataset.Get()
		if !ok {
			return e, apierror.Invalidf("%stargets[%d].dataset: required", prefix, i)
		}
		if slices.IndexFunc(in.Targets[:i], func(o oas.EnrichmentTarget) bool { return o.Dataset.Or("") == d }) >= 0 {
			return e, apierror.Invalidf("%stargets[%d].dataset: %q is listed twice", prefix, i, d)
		}
	}
	return e, nil
}

// checkInputs applies checkInput to each of ins, named field[i], and refuses two of the same
// identity (field and type) in one request.
//
// Errors: Invalid naming the entry and the field.
func checkInputs(field string, ins []oas.EnrichmentInput) ([]oas.Enrichment, error) {
	out := make([]oas.Enrichment, 0, len(ins))
	seen := map[string]int{}
	for i, in := range ins {
		path := fmt.Sprintf("%s[%d]", field, i)
		e, err := checkInput(path+".", in)
		if err != nil {
			return nil, err
		}
		if j, ok := seen[identity(e)]; ok {
			return nil, apierror.Invalidf("%s.fieldName: %q is enriched the same way by %s[%d]; each field takes each enrichment once", path, e.FieldName, field, j)
		}
		seen[identity(e)] = i
		out = append(out, e)
	}
	return out, nil
}

// checkPermissions refuses a caller lacking the permission of a kind among es (kindPermission),
// for doing ("add", "remove", "replace").
//
// Errors: Forbidden naming the permission.
func checkPermissions(caller *auth.Principal, doing string, es []oas.Enrichment) error {
	if caller == nil {
		return nil
	}
	for _, e := range es {
		kind, _ := kindOf(e.EnrichmentType)
		if p := kindPermission[kind]; p != "" && !caller.Can(p) {
			return apierror.Forbiddenf("to %s %s enrichments the key needs %s besides geo-enrichment:UpdateConfig", doing, kind, p)
		}
	}
	return nil
}

// checkReference applies the rules of e that read the team's data sets: a custom enrichment
// names an existing data set, and selects columns of its header. Messages name the field after
// prefix ("requestEnrichments[0]." or "").
//
// Errors: NotFound for a data set the team does not have; Invalid for a column the header lacks.
func checkReference(ctx context.Context, q db.Querier, teamID int64, prefix string, e oas.Enrichment) error {
	kind, id := kindOf(e.EnrichmentType)
	if kind != kindCustom {
		return nil
	}
	d, err := getDataSet(ctx, q, teamID, id)
	if errors.Is(err, db.ErrNotFound) {
		return apierror.NotFoundf("%senrichmentType.customEnrichment.id: no custom enrichment data set %d in this team; create it first", prefix, id)
	}
	if err != nil {
		return err
	}
	for i, c := range e.SelectedColumns {
		if !slices.Contains(d.Header, c) {
			return apierror.Invalidf("%sselectedColumns[%d]: data set %q (id %d) has no column %q; its columns are %s",
				prefix, i, d.Name, d.ID, c, quoteList(d.Header))
		}
	}
	return nil
}

// quoteList is names quoted and joined with commas, for messages.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// store checks the references of es (checkReference, named field[i]), that none shares its
// identity with kept, and that kept and es together stay within Limit; then stores each under
// the team's next id, in order, and returns them with their ids.
//
// Errors: NotFound, Invalid (checkReference); Conflict for an enrichment kept already; LimitExceeded.
func store(ctx context.Context, tx *db.Tx, teamID int64, field string, kept, es []oas.Enrichment) ([]oas.Enrichment, error) {
	if n := len(kept) + len(es); n > Limit {
		return nil, apierror.LimitExceededf("%s: the team would hold %d enrichments, more than its limit of %d (it holds %d that stay); remove some first",
			field, n, Limit, len(kept))
	}
	taken := make(map[string]int64, len(kept))
	for _, k := range kept {
		taken[identity(k)] = k.ID
	}
	out := make([]oas.Enrichment, 0, len(es))
	for i, e := range es {
		prefix := fmt.Sprintf("%s[%d].", field, i)
		if err := checkReference(ctx, tx, teamID, prefix, e); err != nil {
			return nil, err
		}
		if id, ok := taken[identity(e)]; ok {
			return nil, apierror.Conflictf("%sfieldName: enrichment %d already enriches %q this way; remove it or overwrite it", prefix, id, e.FieldName)
		}
		id, err := nextID(ctx, tx, teamID, enrichmentIDs)
		if err != nil {
			return nil, err
		}
		e.ID = id
		if err := insertEnrichment(ctx, tx, teamID, e); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, nil
}
