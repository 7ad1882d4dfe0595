package alertdefs

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/queryobject"
)

// The list's query objects, as the public document shapes them. They are read from the raw query
// (deepObject with nested members, which the generated router cannot express), so their Go
// shapes are here; enumerations and required members are checked by queryobject.Decode, the
// other bounds by checkFilter.

type timeRange struct {
	StartTime *time.Time `json:"startTime"`
	EndTime   *time.Time `json:"endTime"`
}

type queryFilter struct {
	EnabledFilter *struct {
		Enabled *bool `json:"enabled"`
	} `json:"enabledFilter"`
	EntityLabelsFilter *struct {
		EntityLabels   map[string]string `json:"entityLabels"`
		ValuesOperator string            `json:"valuesOperator"`
	} `json:"entityLabelsFilter"`
	IDFilter *struct {
		AlertID   []string `json:"alertId"`
		MatchType string   `json:"matchType"`
	} `json:"idFilter"`
	LastTriggeredTimeRangeFilter *struct {
		Range *timeRange `json:"lastTriggeredAtRange"`
	} `json:"lastTriggeredTimeRangeFilter"`
	ModifiedTimeRangeFilter *struct {
		Range *timeRange `json:"modifiedAtRange"`
	} `json:"modifiedTimeRangeFilter"`
	NameFilter *struct {
		Matcher string   `json:"matcher"`
		Name    []string `json:"name"`
	} `json:"nameFilter"`
	PriorityFilter *struct {
		Matcher  string   `json:"matcher"`
		Priority []string `json:"priority"`
	} `json:"priorityFilter"`
	StatusFilter *struct {
		Matcher string   `json:"matcher"`
		Status  []string `json:"status"`
	} `json:"statusFilter"`
	TypeFilter *struct {
		Matcher string   `json:"matcher"`
		Type    []string `json:"type"`
	} `json:"typeFilter"`
	TypeSpecificFilter *struct {
		SloFilter *struct {
			Matcher string   `json:"matcher"`
			SloID   []string `json:"sloId"`
		} `json:"sloFilter"`
	} `json:"typeSpecificFilter"`
}

// The enumerations of the query objects (the generated code has no types for them).
const (
	matcherNotEquals   = "FILTER_MATCHER_NOT_EQUALS"
	matcherContains    = "FILTER_MATCHER_CONTAINS"
	valuesOperatorOr   = "FILTER_VALUES_OPERATOR_OR"
	valuesOperatorAnd  = "FILTER_VALUES_OPERATOR_AND"
	idExclude          = "ALERT_DEF_ID_FILTER_MATCH_TYPE_EXCLUDE"
	orderPriority      = "ALERT_DEF_ORDER_BY_FIELDS_PRIORITY"
	orderLastTriggered = "ALERT_DEF_ORDER_BY_FIELDS_LAST_TRIGGERED_TIME"
	orderUpdated       = "ALERT_DEF_ORDER_BY_FIELDS_UPDATED_TIME"
	orderEnabled       = "ALERT_DEF_ORDER_BY_FIELDS_ENABLED"
	orderDesc          = "ALERT_DEF_ORDER_BY_DIRECTION_DESC"
)

var filterMatchers = []string{"FILTER_MATCHER_UNSPECIFIED", "FILTER_MATCHER_EQUALS", matcherNotEquals, matcherContains}

type pageRequest struct {
	PageSize  int64  `json:"pageSize"`
	PageToken string `json:"pageToken"`
}

type orderBy struct {
	FieldName string `json:"fieldName"`
	Direction string `json:"direction"`
}

func enumOf[T ~string](values []T) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = string(v)
	}
	return out
}

var (
	str          = &queryobject.Schema{Kind: queryobject.String}
	strList      = &queryobject.Schema{Kind: queryobject.Array, Elem: str}
	matcherEnum  = &queryobject.Schema{Kind: queryobject.String, Enum: filterMatchers}
	timeRangeSch = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"startTime": {Kind: queryobject.DateTime}, "endTime": {Kind: queryobject.DateTime},
	}}
	enumList = func(values []string) *queryobject.Schema {
		return &queryobject.Schema{Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.String, Enum: values}}
	}
	enabledSch = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{"enabled": {Kind: queryobject.Boolean}}}
	labelsSch  = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"entityLabels":   {Kind: queryobject.Map, Elem: str},
		"valuesOperator": {Kind: queryobject.String, Enum: []string{"FILTER_VALUES_OPERATOR_UNSPECIFIED", valuesOperatorOr, valuesOperatorAnd}},
	}}
	nameSch = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{"matcher": matcherEnum, "name": strList}}
	typeSch = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"matcher": matcherEnum, "type": enumList(enumOf(oas.AlertDefType("").AllValues())),
	}}
	prioritySch = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"matcher": matcherEnum, "priority": enumList(enumOf(oas.AlertDefPriority("").AllValues())),
	}}
	statusSch = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"matcher": matcherEnum, "status": enumList(enumOf(oas.AlertDefStatus("").AllValues())),
	}}

	listFilterSchema = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"enabledFilter":      enabledSch,
		"entityLabelsFilter": labelsSch,
		"idFilter": {Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
			"alertId":   strList,
			"matchType": {Kind: queryobject.String, Enum: []string{"ALERT_DEF_ID_FILTER_MATCH_TYPE_UNSPECIFIED", "ALERT_DEF_ID_FILTER_MATCH_TYPE_INCLUDE", idExclude}},
		}},
		"lastTriggeredTimeRangeFilter": {Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{"lastTriggeredAtRange": timeRangeSch}},
		"modifiedTimeRangeFilter":      {Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{"modifiedAtRange": timeRangeSch}},
		"nameFilter":                   nameSch,
		"priorityFilter":               prioritySch,
		"statusFilter":                 statusSch,
		"typeFilter":                   typeSch,
		"typeSpecificFilter": {Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
			"sloFilter": {Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{"matcher": matcherEnum, "sloId": strList}},
		}},
	}}
	countsFilterSchema = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"enabledFilter":      enabledSch,
		"entityLabelsFilter": labelsSch,
		"nameFilter":         nameSch,
		"priorityFilter": {Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
			"priority": enumList(enumOf(oas.AlertDefPriority("").AllValues())),
		}},
		"statusFilter": statusSch,
		"typeFilter": {Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
			"type": enumList(enumOf(oas.AlertDefType("").AllValues())),
		}},
	}}
	pageSchema = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"pageSize": {Kind: queryobject.Integer}, "pageToken": str,
	}}
	orderSchema = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"orderBys": {Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
			"fieldName": {Kind: queryobject.String, Enum: []string{"ALERT_DEF_ORDER_BY_FIELDS_UNSPECIFIED", orderPriority, orderLastTriggered, orderUpdated, orderEnabled}},
			"direction": {Kind: queryobject.String, Enum: []string{"ALERT_DEF_ORDER_BY_DIRECTION_ASC_OR_UNSPECIFIED", orderDesc}},
		}}},
	}}
)

// decodeObject reads the query object name into v.
func decodeObject(ctx context.Context, name string, schema *queryobject.Schema, v any) (bool, error) {
	doc, err := queryobject.Decode(queryobject.Values(ctx), name, schema)
	if err != nil || doc == nil {
		return false, err
	}
	if err := json.Unmarshal(doc, v); err != nil {
		return false, apierror.Invalidf("%s: does not have the expected shape: %s", name, queryobject.LastMessagePart(err.Error()))
	}
	return true, nil
}

// checkList requires at most max items of at most maxLen characters, at least minLen.
func checkList(path string, values []string, max, minLen, maxLen int) error {
	if len(values) > max {
		return apierror.Invalidf("%s: must have at most %d items (got %d)", path, max, len(values))
	}
	for i, v := range values {
		if n := len([]rune(v)); n < minLen || n > maxLen {
			return apierror.Invalidf("%s[%d]: must have %d–%d characters (got %d)", path, i, minLen, maxLen, n)
		}
	}
	return nil
}

// checkFilter checks the bounds of the public document that queryobject.Decode leaves.
func checkFilter(name string, f *queryFilter) error {
	if f.NameFilter != nil {
		if err := checkList(name+".nameFilter.name", f.NameFilter.Name, 100, 1, 1024); err != nil {
			return err
		}
	}
	if f.IDFilter != nil {
		if err := checkList(name+".idFilter.alertId", f.IDFilter.AlertID, 1000, 1, 100); err != nil {
			return err
		}
	}
	if f.TypeSpecificFilter != nil && f.TypeSpecificFilter.SloFilter != nil {
		if err := checkList(name+".typeSpecificFilter.sloFilter.sloId", f.TypeSpecificFilter.SloFilter.SloID, 1000, 1, 36); err != nil {
			return err
		}
	}
	for _, l := range []struct {
		path string
		n    int
	}{
		{".priorityFilter.priority", lenOf(f.PriorityFilter != nil, func() int { return len(f.PriorityFilter.Priority) })},
		{".statusFilter.status", lenOf(f.StatusFilter != nil, func() int { return len(f.StatusFilter.Status) })},
		{".typeFilter.type", lenOf(f.TypeFilter != nil, func() int { return len(f.TypeFilter.Type) })},
	} {
		if l.n > 100 {
			return apierror.Invalidf("%s%s: must have at most 100 items (got %d)", name, l.path, l.n)
		}
	}
	return nil
}

func lenOf(ok bool, n func() int) int {
	if !ok {
		return 0
	}
	return n()
}

// matchValue applies a public matcher: EQUALS (and UNSPECIFIED) keeps what is one of values,
// NOT_EQUALS what is none of them, CONTAINS what contains one of them (case-insensitively). No
// values filter nothing.
func matchValue(matcher string, values []string, v string, fold bool) bool {
	if len(values) == 0 {
		return true
	}
	eq := func(a, b string) bool {
		if fold {
			return strings.EqualFold(a, b)
		}
		return a == b
	}
	switch matcher {
	case matcherNotEquals:
		return !slices.ContainsFunc(values, func(x string) bool { return eq(x, v) })
	case matcherContains:
		return slices.ContainsFunc(values, func(x string) bool {
			if fold {
				return strings.Contains(strings.ToLower(v), strings.ToLower(x))
			}
			return strings.Contains(v, x)
		})
	default:
		return slices.ContainsFunc(values, func(x string) bool { return eq(x, v) })
	}
}

func inRange(r *timeRange, t oas.OptDateTime) bool {
	if r == nil {
		return true
	}
	if !t.Set {
		return false
	}
	if r.StartTime != nil && t.Value.Before(*r.StartTime) {
		return false
	}
	if r.EndTime != nil && !t.Value.Before(*r.EndTime) {
		return false
	}
	return true
}

// passes reports whether d passes every filter of f.
func passes(f *queryFilter, d *oas.AlertDef) bool {
	p := d.AlertDefProperties.Value
	if x := f.EnabledFilter; x != nil && x.Enabled != nil && *x.Enabled != enabledOf(p) {
		return false
	}
	if x := f.EntityLabelsFilter; x != nil && len(x.EntityLabels) > 0 {
		hits := 0
		for k, v := range x.EntityLabels {
			if got, ok := p.EntityLabels.Value[k]; ok && got == v {
				hits++
			}
		}
		if x.ValuesOperator == valuesOperatorAnd {
			if hits < len(x.EntityLabels) {
				return false
			}
		} else if hits == 0 {
			return false
		}
	}
	if x := f.IDFilter; x != nil && len(x.AlertID) > 0 {
		in := slices.ContainsFunc(x.AlertID, func(id string) bool { return strings.EqualFold(id, d.ID.Or("")) })
		if in == (x.MatchType == idExclude) {
			return false
		}
	}
	if x := f.LastTriggeredTimeRangeFilter; x != nil && !inRange(x.Range, d.LastTriggeredTime) {
		return false
	}
	if x := f.ModifiedTimeRangeFilter; x != nil && !inRange(x.Range, d.UpdatedTime) {
		return false
	}
	if x := f.NameFilter; x != nil && !matchValue(x.Matcher, x.Name, p.Name.Or(""), true) {
		return false
	}
	if x := f.PriorityFilter; x != nil && !matchValue(x.Matcher, x.Priority, string(priorityOf(p)), false) {
		return false
	}
	if x := f.StatusFilter; x != nil && !matchValue(x.Matcher, x.Status, string(d.Status.Or(oas.AlertDefStatusALERTDEFSTATUSUNSPECIFIED)), false) {
		return false
	}
	if x := f.TypeFilter; x != nil && !matchValue(x.Matcher, x.Type, string(p.Type.Or(zeroType)), false) {
		return false
	}
	if x := f.TypeSpecificFilter; x != nil && x.SloFilter != nil && len(x.SloFilter.SloID) > 0 {
		s, ok := p.SloThreshold.Get()
		if !ok {
			return false
		}
		if !matchValue(x.SloFilter.Matcher, x.SloFilter.SloID, s.SloDefinition.Value.SloId.Or(""), true) {
			return false
		}
	}
	return true
}

// maxLabelCounts bounds the entity label counts of one answer.
const maxLabelCounts = 1000

// defaultPageSize is the page size when none (or 0) is asked for.
const defaultPageSize = 100

// pageToken is an opaque token for the page starting at offset.
func pageToken(offset int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("alertdefs:" + strconv.Itoa(offset)))
}

func offsetOf(token string) (int, error) {
	raw, err := base64.RawURLEncoding.DecodeString(token)
	s, ok := strings.CutPrefix(string(raw), "alertdefs:")
	n, err2 := strconv.Atoi(s)
	if err != nil || !ok || err2 != nil || n < 0 {
		return 0, apierror.Invalidf("pagination.pageToken: not a token this list answered")
	}
	return n, nil
}

// ListAlertDefs answers one page of the team's definitions that pass query_filter, in the order
// of order_bys (creation order, then id, when none).
//
// Errors: Invalid naming the query parameter for a malformed filter, order or page.
func (h *AlertDefHandler) ListAlertDefs(ctx context.Context, params oas.ListAlertDefsParams) (*oas.AlertDefList, error) {
	caller := auth.PrincipalFrom(ctx)
	var f queryFilter
	if _, err := decodeObject(ctx, "query_filter", listFilterSchema, &f); err != nil {
		return nil, err
	}
	if err := checkFilter("query_filter", &f); err != nil {
		return nil, err
	}
	var page pageRequest
	if _, err := decodeObject(ctx, "pagination", pageSchema, &page); err != nil {
		return nil, err
	}
	if page.PageSize < 0 || page.PageSize > 1000 {
		return nil, apierror.Invalidf("pagination.pageSize: must be 0–1000 (got %d)", page.PageSize)
	}
	if len(page.PageToken) > 4096 {
		return nil, apierror.Invalidf("pagination.pageToken: must have at most 4096 characters")
	}
	offset := 0
	if page.PageToken != "" {
		var err error
		if offset, err = offsetOf(page.PageToken); err != nil {
			return nil, err
		}
	}
	var order struct {
		OrderBys []orderBy `json:"orderBys"`
	}
	if _, err := decodeObject(ctx, "order_bys", orderSchema, &order); err != nil {
		return nil, err
	}
	if len(order.OrderBys) > 20 {
		return nil, apierror.Invalidf("order_bys.orderBys: must have at most 20 items (got %d)", len(order.OrderBys))
	}
	var all []storedAccess
	err := eachDef(ctx, h.db.Read(), caller.TeamID, func(s *stored) error {
		if passes(&f, &s.def) {
			all = append(all, storedAccess{def: s.def, policy: s.accessPolicy.String, hasPolicy: s.accessPolicy.Valid})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sortDefs(all, order.OrderBys)
	size := int(page.PageSize)
	if size == 0 {
		size = defaultPageSize
	}
	out := &oas.AlertDefList{AlertDefs: []oas.AlertDef{}}
	end := min(offset+size, len(all))
	if offset < len(all) {
		for _, s := range all[offset:end] {
			out.AlertDefs = append(out.AlertDefs, s.def)
		}
	}
	info := oas.AlertDefPageInfo{TotalSize: oas.NewOptInt64(int64(len(all)))}
	if end < len(all) {
		info.NextPageToken = oas.NewOptString(pageToken(end))
	}
	out.Pagination = oas.NewOptAlertDefPageInfo(info)
	if params.IncludeAccessPermissions.Or(false) {
		access := oas.AlertDefListAccess{}
		for _, s := range all[min(offset, len(all)):end] {
			access[s.def.ID.Or("")] = accessOf(caller, sql.NullString{String: s.policy, Valid: s.hasPolicy})
		}
		out.Access = oas.NewOptAlertDefListAccess(access)
	}
	return out, nil
}

type storedAccess struct {
	def       oas.AlertDef
	policy    string
	hasPolicy bool
}

// sortDefs orders defs by the keys (stable over creation order; ties by id).
func sortDefs(defs []storedAccess, keys []orderBy) {
	slices.SortStableFunc(defs, func(a, b storedAccess) int {
		for _, k := range keys {
			c := compareBy(k.FieldName, &a.def, &b.def)
			if k.Direction == orderDesc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
}

func compareBy(field string, a, b *oas.AlertDef) int {
	pa, pb := a.AlertDefProperties.Value, b.AlertDefProperties.Value
	switch field {
	case orderPriority:
		return cmp.Compare(priorityRank(priorityOf(pa)), priorityRank(priorityOf(pb)))
	case orderLastTriggered:
		return compareTimes(a.LastTriggeredTime, b.LastTriggeredTime)
	case orderUpdated:
		return compareTimes(a.UpdatedTime, b.UpdatedTime)
	case orderEnabled:
		return cmp.Compare(boolInt(enabledOf(pa)), boolInt(enabledOf(pb)))
	}
	return 0
}

// priorityRank is a priority's place in the enumeration: P5 is 0, P1 is 4.
func priorityRank(p oas.AlertDefPriority) int {
	return slices.Index(p.AllValues(), p)
}

// compareTimes orders unset times first.
func compareTimes(a, b oas.OptDateTime) int {
	switch {
	case !a.Set && !b.Set:
		return 0
	case !a.Set:
		return -1
	case !b.Set:
		return 1
	}
	return a.Value.Compare(b.Value)
}

// CountAlertDefFilterOptions counts the team's definitions that pass query_filter per type,
// priority, status, enabled state and entity label; values no definition has are left out.
//
// Errors: Invalid naming the query parameter for a malformed filter.
func (h *AlertDefHandler) CountAlertDefFilterOptions(ctx context.Context) (*oas.AlertDefFilterCounts, error) {
	caller := auth.PrincipalFrom(ctx)
	var f queryFilter
	if _, err := decodeObject(ctx, "query_filter", countsFilterSchema, &f); err != nil {
		return nil, err
	}
	if err := checkFilter("query_filter", &f); err != nil {
		return nil, err
	}
	types := map[oas.AlertDefType]int64{}
	prios := map[oas.AlertDefPriority]int64{}
	statuses := map[oas.AlertDefStatus]int64{}
	enabled := map[bool]int64{}
	labels := map[[2]string]int64{}
	err := eachDef(ctx, h.db.Read(), caller.TeamID, func(s *stored) error {
		if !passes(&f, &s.def) {
			return nil
		}
		p := s.def.AlertDefProperties.Value
		types[p.Type.Or(zeroType)]++
		prios[priorityOf(p)]++
		statuses[s.def.Status.Or(oas.AlertDefStatusALERTDEFSTATUSUNSPECIFIED)]++
		enabled[enabledOf(p)]++
		for k, v := range p.EntityLabels.Value {
			labels[[2]string{k, v}]++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	c := oas.AlertDefFilterCountsByDimension{
		TypeCounts: []oas.AlertDefTypeCount{}, PriorityCounts: []oas.AlertDefPriorityCount{},
		StatusCounts: []oas.AlertDefStatusCount{}, EnabledCounts: []oas.AlertDefEnabledCount{},
		EntityLabelCounts: []oas.AlertDefEntityLabelCount{},
	}
	for _, t := range oas.AlertDefType("").AllValues() {
		if n := types[t]; n > 0 {
			c.TypeCounts = append(c.TypeCounts, oas.AlertDefTypeCount{Type: oas.NewOptAlertDefType(t), Count: oas.NewOptInt64(n)})
		}
	}
	for _, p := range oas.AlertDefPriority("").AllValues() {
		if n := prios[p]; n > 0 {
			c.PriorityCounts = append(c.PriorityCounts, oas.AlertDefPriorityCount{Priority: oas.NewOptAlertDefPriority(p), Count: oas.NewOptInt64(n)})
		}
	}
	for _, s := range oas.AlertDefStatus("").AllValues() {
		if n := statuses[s]; n > 0 {
			c.StatusCounts = append(c.StatusCounts, oas.AlertDefStatusCount{Status: oas.NewOptAlertDefStatus(s), Count: oas.NewOptInt64(n)})
		}
	}
	for _, e := range []bool{false, true} {
		if n := enabled[e]; n > 0 {
			c.EnabledCounts = append(c.EnabledCounts, oas.AlertDefEnabledCount{Enabled: oas.NewOptBool(e), Count: oas.NewOptInt64(n)})
		}
	}
	keys := make([][2]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	// The most common pairs first, at most maxLabelCounts (the public bound).
	slices.SortFunc(keys, func(a, b [2]string) int {
		return cmp.Or(cmp.Compare(labels[b], labels[a]), cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	})
	for _, k := range keys {
		if k[1] == "" {
			continue // the public count names a value of 1–1024 characters
		}
		if len(c.EntityLabelCounts) == maxLabelCounts {
			break
		}
		c.EntityLabelCounts = append(c.EntityLabelCounts, oas.AlertDefEntityLabelCount{
			LabelKey: oas.NewOptString(k[0]), LabelValue: oas.NewOptString(k[1]), Count: oas.NewOptInt64(labels[k]),
		})
	}
	return &oas.AlertDefFilterCounts{Counts: oas.NewOptAlertDefFilterCountsByDimension(c)}, nil
}

// DownloadAlertDefs answers the named definitions (all of the team's when ids is empty), oldest
// first, as a JSON file `{"alertDefs": [...]}`, and the ids that name none.
func (h *AlertDefHandler) DownloadAlertDefs(ctx context.Context, params oas.DownloadAlertDefsParams) (*oas.AlertDefDownload, error) {
	caller := auth.PrincipalFrom(ctx)
	want := map[string]bool{}
	for _, id := range params.Ids {
		want[canonicalID(id)] = true
	}
	found := map[string]bool{}
	var b strings.Builder
	b.WriteString(`{"alertDefs":[`)
	n := 0
	err := eachDef(ctx, h.db.Read(), caller.TeamID, func(s *stored) error {
		id := s.def.ID.Or("")
		if len(want) > 0 && !want[id] {
			return nil
		}
		found[id] = true
		doc, err := s.def.MarshalJSON()
		if err != nil {
			return fmt.Errorf("encode alert definition: %w", err)
		}
		if n > 0 {
			b.WriteByte(',')
		}
		n++
		b.Write(doc)
		return nil
	})
	if err != nil {
		return nil, err
	}
	b.WriteString(`]}`)
	out := &oas.AlertDefDownload{Content: []byte(b.String()), NotFoundIds: []string{}}
	seen := map[string]bool{}
	for _, id := range params.Ids {
		if c := canonicalID(id); !found[c] && !seen[c] {
			seen[c] = true
			out.NotFoundIds = append(out.NotFoundIds, id)
		}
	}
	return out, nil
}
