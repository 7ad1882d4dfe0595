package teamconfig

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// The actions of a plan.
const (
	ActionCreate    = "create"
	ActionUpdate    = "update"
	ActionDelete    = "delete"
	ActionUnchanged = "unchanged"
)

// Change is one line of a plan.
type Change struct {
	Area, ID, Name, Action string
	// MatchedBy says how a create's or update's resource was matched with the team's: MatchedByID,
	// MatchedByName (a document resource without an id, see matchByName), or "" for a create.
	MatchedBy string
	// Note says why a resource without an id is created although the team has one of its name.
	Note string
	// Fields are the fields an update changes (see diffFields).
	Fields []FieldChange
}

// The ways a resource of the document is matched with the team's.
const (
	MatchedByID   = "id"
	MatchedByName = "name"
)

// wantedArea is the document's resources of one area, prepared, with what matching by name needs:
// each one's document and whether it gave an id.
type wantedArea struct {
	list   []Resource
	docs   []json.RawMessage
	gaveID []bool
}

// compareIDs orders ids as text, and integer ids (views, custom roles) as numbers.
func compareIDs(x, y string) int {
	if isDigits(x) && isDigits(y) && len(x) != len(y) {
		return len(x) - len(y)
	}
	return strings.Compare(x, y)
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

// errDryRun rolls back the transaction of a dry run after the plan was carried out.
var errDryRun = errors.New("dry run")

// export reads every area's resources of the team, ordered by id within an area.
//
// Errors: Forbidden when the caller lacks an area's read permission.
func (h *Handler) export(ctx context.Context, q db.Querier, caller *auth.Principal) (map[string][]Resource, error) {
	out := make(map[string][]Resource, len(h.areas))
	for _, a := range h.areas {
		read, _ := a.Permissions()
		if !caller.Can(read) {
			return nil, apierror.Forbiddenf("the API key lacks the permission %q, which exporting %s requires", read, a.Key())
		}
		list, err := a.Export(ctx, q, caller.TeamID)
		if err != nil {
			return nil, fmt.Errorf("export %s: %w", a.Key(), err)
		}
		slices.SortFunc(list, func(x, y Resource) int { return compareIDs(x.ID, y.ID) })
		out[a.Key()] = list
	}
	return out, nil
}

// apply makes the caller's team's configuration equal to doc for the areas doc holds, in one
// transaction, and returns the plan; with dryRun the transaction is rolled back after the work.
// With prune, resources of those areas that doc does not hold are deleted.
//
// Errors: those of the areas' Prepare, Put and Delete (Invalid, Conflict, LimitExceeded, ...),
// with the area, index and name of the resource in front of the message; Invalid for two
// resources of an area with one id; Forbidden when the caller lacks the write permission of an
// area the plan changes.
func (h *Handler) apply(ctx context.Context, caller *auth.Principal, doc document, dryRun, prune bool) ([]Change, error) {
	// Decoding and the checks that read nothing are done before the transaction (on SQLite write
	// transactions run one after another).
	desired := map[string]wantedArea{}
	for _, a := range h.areas {
		items, ok := doc.areas[a.Key()]
		if !ok {
			continue
		}
		list := make([]Resource, 0, len(items))
		gaveID := make([]bool, 0, len(items))
		seen := map[string]int{}
		for i, item := range items {
			gaveID = append(gaveID, hasID(item))
			r, err := a.Prepare(ctx, item, h.db.NewID)
			if err != nil {
				return nil, h.located(a, i, nameOf(item), err)
			}
			if prev, dup := seen[r.ID]; dup && r.ID != "" { // "": an id Put assigns
				return nil, h.located(a, i, r.Name, invalidf("id: %s[%d] has the id %q already; ids are unique within an area", a.Key(), prev, r.ID))
			}
			seen[r.ID] = i
			list = append(list, r)
		}
		desired[a.Key()] = wantedArea{list: list, docs: items, gaveID: gaveID}
	}
	var plan []Change
	err := h.db.InTx(ctx, func(tx *db.Tx) error {
		// Two applies to one team plan against the same rows: without a turn each, both would
		// see a resource of the document missing and both create it, and the second would
		// fail on its id (on PostgreSQL; SQLite runs write transactions one at a time).
		if err := tx.Serialize(ctx, "mgmtapi.teamconfig.apply:"+strconv.FormatInt(caller.TeamID, 10)); err != nil {
			return err
		}
		var err error
		plan, err = h.carryOut(ctx, tx, caller, desired, prune)
		if err != nil {
			return err
		}
		if dryRun {
			return errDryRun
		}
		return nil
	})
	if err != nil && !errors.Is(err, errDryRun) {
		return nil, err
	}
	return plan, nil
}

// areaPlan is what an apply does to one area.
type areaPlan struct {
	area    Area
	want    []Resource
	deletes []Change
	puts    []Change // one per resource of want
}

// carryOut plans every area of desired and carries the plans out in tx: first the deletes (areas
// in reverse document order, so that a limit counts what stays), then the creates and replaces
// (areas in document order, so that what a resource refers to is there first; within an area in
// document order or a PutOrderer's), then the deletes of DeletesLast areas (what the others referred to).
func (h *Handler) carryOut(ctx context.Context, tx *db.Tx, caller *auth.Principal, desired map[string]wantedArea, prune bool) ([]Change, error) {
	var plans []areaPlan
	var all []Change
	for _, a := range h.areas {
		want, ok := desired[a.Key()]
		if !ok {
			continue
		}
		p, err := planArea(ctx, tx, caller, a, want, prune, h.db.NewID)
		if err != nil {
			return nil, err
		}
		plans = append(plans, p)
		all = append(all, p.deletes...)
		all = append(all, p.puts...)
	}
	deleteAll := func(last bool) error {
		for i := len(plans) - 1; i >= 0; i-- {
			p := plans[i]
			if _, ok := p.area.(DeletesLast); ok != last {
				continue
			}
			for _, c := range p.deletes {
				if err := p.area.Delete(ctx, tx, caller.TeamID, c.ID); err != nil {
					return h.locatedDelete(p.area, c, err)
				}
			}
		}
		return nil
	}
	if err := deleteAll(false); err != nil {
		return nil, err
	}
	for _, p := range plans {
		changed := len(p.deletes) > 0
		for _, i := range putOrder(p) {
			r := p.want[i]
			if p.puts[i].Action == ActionUnchanged {
				if ref, ok := p.area.(Referrer); ok {
					if err := ref.Recheck(ctx, tx, caller.TeamID, r); err != nil {
						return nil, h.located(p.area, i, r.Name, err)
					}
				}
				continue
			}
			changed = true
			if err := p.area.Put(ctx, tx, caller.TeamID, r, p.puts[i].Action == ActionUpdate); err != nil {
				return nil, h.located(p.area, i, r.Name, err)
			}
		}
		if f, ok := p.area.(Finisher); ok && changed {
			if err := f.Finish(ctx, tx, caller.TeamID, p.want); err != nil {
				return nil, h.located(p.area, 0, "", err)
			}
		}
	}
	if err := deleteAll(true); err != nil {
		return nil, err
	}
	return all, nil
}

// putOrder is the order in which an apply stores the resources of p.want: document order, or
// the area's (PutOrderer).
func putOrder(p areaPlan) []int {
	if o, ok := p.area.(PutOrderer); ok {
		return o.OrderPuts(p.want)
	}
	order := make([]int, len(p.want))
	for i := range order {
		order[i] = i
	}
	return order
}

// planArea compares the team's resources of one area, read in tx, with want: a resource of want
// is created, updated or unchanged; with prune, one the team has and want lacks is deleted.
//
// Errors: Forbidden when the plan changes the area and the caller lacks its write permission.
func planArea(ctx context.Context, tx *db.Tx, caller *auth.Principal, a Area, wanted wantedArea, prune bool, newID func() string) (areaPlan, error) {
	p := areaPlan{area: a}
	current, err := a.Export(ctx, tx, caller.TeamID)
	if err != nil {
		return p, fmt.Errorf("read %s: %w", a.Key(), err)
	}
	want, matched, notes := matchByName(ctx, a, wanted, current, newID)
	p.want = want
	byID := make(map[string]Resource, len(current))
	for _, r := range current {
		byID[r.ID] = r
	}
	if _, single := a.(Single); single && len(current) == 1 && len(want) == 1 {
		// The team's one resource is the document's, whatever their ids (Put gives it the
		// document's id).
		byID[want[0].ID] = current[0]
	}
	kept := map[string]bool{}
	for i, r := range want {
		kept[r.ID] = true
		change := Change{Area: a.Key(), ID: r.ID, Name: r.Name, Action: ActionCreate, Note: notes[i]}
		if cur, ok := byID[r.ID]; ok {
			change.Action, change.MatchedBy = ActionUpdate, MatchedByID
			if matched[i] {
				change.MatchedBy = MatchedByName
			}
			if c, ok := a.(Comparer); ok && c.Unchanged(cur, r) || sameJSON(cur.Doc, r.Doc) {
				change.Action = ActionUnchanged
			} else if fields, ok := diffFields(cur.Doc, r.Doc, wanted.docs[i]); ok && len(fields) == 0 {
				// only ids the server drew for parts the document gives none (a set's groups)
				change.Action = ActionUnchanged
			} else {
				change.Fields = fields
			}
		}
		p.puts = append(p.puts, change)
	}
	if _, single := a.(Single); prune && !single {
		// Newest first (server-made ids grow with time): a resource that refers to another of its
		// area (a preset to its parent) is usually the newer one, and goes first.
		slices.SortFunc(current, func(x, y Resource) int { return compareIDs(y.ID, x.ID) })
		for _, r := range current {
			if !kept[r.ID] {
				p.deletes = append(p.deletes, Change{Area: a.Key(), ID: r.ID, Name: r.Name, Action: ActionDelete})
			}
		}
		if o, ok := a.(DeleteOrderer); ok {
			o.OrderDeletes(p.deletes, current)
		}
	}
	_, write := a.Permissions()
	for _, c := range append(p.deletes, p.puts...) {
		if c.Action != ActionUnchanged && !caller.Can(write) {
			return p, apierror.Forbiddenf("the API key lacks the permission %q, which changing %s requires", write, a.Key())
		}
	}
	return p, nil
}

// located puts the resource's place in the document in front of an area's error: Put and
// Prepare errors keep their kind; other errors pass unchanged (a 500).
func (h *Handler) located(a Area, index int, name string, err error) error {
	where := a.Key()
	if _, single := a.(Single); !single {
		where = fmt.Sprintf("%s[%d]", where, index)
	}
	if name != "" {
		where += fmt.Sprintf(" (%q)", name)
	}
	var body *BodyError
	if errors.As(err, &body) && h.describe != nil {
		return apierror.Invalidf("%s: %s", where, h.describe(body.Operation, body.Body, body.Err))
	}
	if e, ok := apierror.As(err); ok {
		kind := e.Kind
		if kind == apierror.NotFound {
			kind = apierror.Invalid // what a resource refers to is missing: the document is wrong
		}
		return &apierror.Error{Kind: kind, Message: where + ": " + e.Message}
	}
	if errors.Is(err, db.ErrNotFound) {
		return apierror.Invalidf("%s: refers to something the team does not have", where)
	}
	if errors.Is(err, db.ErrConflict) {
		return apierror.Conflictf("%s: clashes with another resource of the team (%v)", where, err)
	}
	return err
}

func (h *Handler) locatedDelete(a Area, c Change, err error) error {
	where := fmt.Sprintf("%s %q (deleted by prune)", a.Key(), c.ID)
	if e, ok := apierror.As(err); ok {
		return &apierror.Error{Kind: e.Kind, Message: where + ": " + e.Message}
	}
	return err
}

// nameOf returns the name field of a resource document, for messages about a resource that
// could not be prepared.
func nameOf(doc []byte) string {
	var named struct {
		Name any `json:"name"`
	}
	if json.Unmarshal(doc, &named) == nil {
		if s, ok := named.Name.(string); ok {
			return s
		}
	}
	return ""
}

// sameJSON reports whether two JSON documents hold the same value (object key order aside).
func sameJSON(a, b []byte) bool {
	var x, y any
	da := json.NewDecoder(bytes.NewReader(a))
	da.UseNumber()
	db := json.NewDecoder(bytes.NewReader(b))
	db.UseNumber()
	if da.Decode(&x) != nil || db.Decode(&y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

// hasID reports whether a resource document gives an id (a non-null "id" field).
func hasID(doc []byte) bool {
	var field struct {
		ID json.RawMessage `json:"id"`
	}
	return json.Unmarshal(doc, &field) == nil && len(field.ID) > 0 && string(field.ID) != "null"
}

// matchByName gives the document's resources that have no id the id of the team's resource of
// the same name, where that name is unique: exactly one of the team's resources of the area has
// it, no other resource of the document has it, and no resource of the document names that id.
// Without it a resource added to a file without an id would be created again by every apply. A
// matched resource is prepared again from its document with that id (matched[i] is true); a
// resource left unmatched although the team has its name gets a note saying why (notes[i]).
// Single areas match their one resource already (planArea).
func matchByName(ctx context.Context, a Area, wanted wantedArea, current []Resource, newID func() string) (want []Resource, matched []bool, notes []string) {
	want = slices.Clone(wanted.list)
	matched = make([]bool, len(want))
	notes = make([]string, len(want))
	if _, single := a.(Single); single {
		return want, matched, notes
	}
	teamNamed := map[string][]Resource{}
	for _, r := range current {
		if r.Name != "" {
			teamNamed[r.Name] = append(teamNamed[r.Name], r)
		}
	}
	docNamed := map[string]int{}
	givenIDs := map[string]bool{}
	for i, r := range want {
		docNamed[r.Name]++
		if wanted.gaveID[i] {
			givenIDs[r.ID] = true
		}
	}
	for i, r := range want {
		if wanted.gaveID[i] || r.Name == "" || len(teamNamed[r.Name]) == 0 {
			continue
		}
		same := teamNamed[r.Name]
		switch {
		case len(same) > 1:
			notes[i] = fmt.Sprintf("no id, and %d resources of the team have this name: created (give the id to update one)", len(same))
			continue
		case docNamed[r.Name] > 1:
			notes[i] = fmt.Sprintf("no id, and %d resources of the document have this name: created (give the id to update one)", docNamed[r.Name])
			continue
		case givenIDs[same[0].ID]:
			notes[i] = fmt.Sprintf("no id, and the team's resource of this name is the document's %q already: created", same[0].ID)
			continue
		}
		var stored struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(same[0].Doc, &stored) != nil || len(stored.ID) == 0 {
			continue // the area's documents carry no id field
		}
		doc, err := withRawField(wanted.docs[i], "id", stored.ID)
		if err != nil {
			continue
		}
		r2, err := a.Prepare(ctx, doc, newID)
		if err != nil || r2.ID != same[0].ID {
			continue
		}
		want[i], matched[i] = r2, true
	}
	return want, matched, notes
}

// withRawField returns the JSON object doc with its field name set to value.
func withRawField(doc []byte, name string, value json.RawMessage) ([]byte, error) {
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&fields); err != nil {
		return nil, err
	}
	fields[name] = value
	return json.Marshal(fields)
}

// FieldChange is one field an update changes: its path in the resource and its value before and
// after, as JSON text; Before is "" for a field added, After "" for one removed.
type FieldChange struct {
	Path, Before, After string
}

// Bounds of the field changes a plan lists: the fields per resource, and the characters of a
// value shown (a longer one is cut, ending in "…").
const (
	maxFieldChanges = 100
	maxFieldValue   = 200
)

// diffFields lists the fields whose values differ between two resource documents, depth first,
// object keys in order, as paths like groups[0].rules[0].expr: what terraform plan and kubectl
// diff show. An array whose length changes is compared item by item, and the items beyond the
// shorter one are added or removed. given is the resource as the applied document gives it: an
// "id" below the top level that it does not give is one the server draws (a recording-rule
// group's), and a difference there is no change the document asks for, so it is not listed.
// ok is false when a document is not JSON.
func diffFields(before, after, given []byte) (_ []FieldChange, ok bool) {
	var x, y, g any
	for _, d := range []struct {
		doc  []byte
		into *any
	}{{before, &x}, {after, &y}, {given, &g}} {
		dec := json.NewDecoder(bytes.NewReader(d.doc))
		dec.UseNumber()
		if dec.Decode(d.into) != nil {
			return nil, false
		}
	}
	var out []FieldChange
	var walk func(path string, x, y, g any, hasX, hasY, hasG bool)
	walk = func(path string, x, y, g any, hasX, hasY, hasG bool) {
		if len(out) >= maxFieldChanges {
			return
		}
		xo, xObj := x.(map[string]any)
		yo, yObj := y.(map[string]any)
		gObj, _ := g.(map[string]any)
		if hasX && hasY && xObj && yObj {
			keys := make([]string, 0, len(xo)+len(yo))
			for k := range xo {
				keys = append(keys, k)
			}
			for k := range yo {
				if _, ok := xo[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			for _, k := range keys {
				xv, hx := xo[k]
				yv, hy := yo[k]
				gv, hg := gObj[k]
				if k == "id" && path != "" && !hg {
					continue // drawn by the server, not given by the document
				}
				walk(joinPath(path, k), xv, yv, gv, hx, hy, hg)
			}
			return
		}
		xa, xArr := x.([]any)
		ya, yArr := y.([]any)
		ga, _ := g.([]any)
		if hasX && hasY && xArr && yArr {
			for i := range max(len(xa), len(ya)) {
				var xv, yv, gv any
				if i < len(xa) {
					xv = xa[i]
				}
				if i < len(ya) {
					yv = ya[i]
				}
				if i < len(ga) {
					gv = ga[i]
				}
				walk(fmt.Sprintf("%s[%d]", path, i), xv, yv, gv, i < len(xa), i < len(ya), i < len(ga))
			}
			return
		}
		if hasX && hasY && reflect.DeepEqual(x, y) {
			return
		}
		c := FieldChange{Path: path}
		if hasX {
			c.Before = shownValue(x)
		}
		if hasY {
			c.After = shownValue(y)
		}
		out = append(out, c)
	}
	walk("", x, y, g, true, true, true)
	return out, true
}

// joinPath appends an object key to a field path: .key, or ["key"] when the key is not a plain
// name.
func joinPath(path, key string) string {
	plain := key != ""
	for i, c := range key {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			plain = false
			break
		}
	}
	if !plain {
		b, _ := json.Marshal(key)
		return path + "[" + string(b) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// shownValue is a value as compact JSON text, cut at maxFieldValue characters.
func shownValue(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if r := []rune(string(b)); len(r) > maxFieldValue {
		return string(r[:maxFieldValue-1]) + "…"
	}
	return string(b)
}
