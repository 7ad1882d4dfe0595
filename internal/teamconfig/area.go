// Package teamconfig exports a team's whole configuration as one document and applies such a
// document: in one transaction it makes the team's configuration equal to the document, and
// answers the plan (create, update, delete or unchanged per resource).
//
// It holds no rule and no SQL of any area. Each area implements Area in its own package (a file
// named configuration.go), with the same checking and store functions its HTTP operations use,
// and internal/api hands the areas to NewHandler in the order of AreaOrder.
package teamconfig

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/db"
)

// Area is one area's part of a team's configuration.
type Area interface {
	// Key is the area's key in the document, e.g. "recordingRuleSets".
	Key() string
	// Permissions are the permissions that reading and changing the area's resources need.
	Permissions() (read, write string)
	// Export returns the team's resources in the document's form: what the area's read
	// operation answers, without timestamps. q is the read pool or the apply's transaction.
	Export(ctx context.Context, q db.Querier, teamID int64) ([]Resource, error)
	// Prepare decodes and checks one resource of a document with every rule of the area that
	// reads nothing from the database, and returns it in the form Export would give once it is
	// stored (a resource without an id gets one from newID). Errors are apierror values whose
	// message starts with the field.
	Prepare(ctx context.Context, doc []byte, newID func() string) (Resource, error)
	// Put stores r in tx, as a new resource when exists is false, replacing the stored one
	// otherwise, with every rule of the area that reads the database (limits, references).
	Put(ctx context.Context, tx *db.Tx, teamID int64, r Resource, exists bool) error
	// Delete removes the team's resource id in tx.
	Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error
}

// Single is implemented by areas that hold at most one resource per team (the quota rule set,
// the policy settings): the document holds it as an object, not a list, and prune never
// deletes it.
type Single interface {
	Single()
}

// Resource is one resource of an area.
type Resource struct {
	// ID identifies the resource within its area and team; "" for a new resource whose id Put
	// assigns (an area whose ids come from a counter of the team).
	ID string
	// Name is the resource's name, for the plan and messages; empty when it has none.
	Name string
	// Doc is the resource as a JSON object, in the document's form.
	Doc []byte
	// Value is what the area prepared from Doc, for its Put (nil when it needs none).
	Value any
}

// AreaOrder is the order of the areas in the document and in an apply. An area that refers to
// another comes after it (views after view folders, a pair's default preset after the presets,
// routers after the connectors and presets their targets name, connectors after the outgoing
// webhooks they deliver through); prune deletes in reverse order.
var AreaOrder = []string{
	"recordingRuleSets", "notificationPresets", "notificationPresetDefaults", "outgoingWebhooks", "connectors", "routers", "parsingRuleGroups",
	"policies", "policySettings", "quotaRuleSet", "retentionTags", "retentionTagsEnabled",
	"customRoles", "viewFolders", "views", "dashboardFolders", "dashboards", "defaultDashboard", "dashboardPins",
	"extensionDeployments", "slos", "events2metrics", "caseSettings", "alertDefinitions", "alertSchedulerRules",
	"integrations", "contextualDataIntegrations",
	"scopes", "groups",
	"aiApplications", "aiModelPricing", "aiEvaluations", "aiCustomEvaluations",
	"ipAccess",
	"enrichmentDataSets", "enrichments",
	"actions", "logsArchiveTarget", "metricsArchive",
}

// WithoutFields returns the JSON object doc without its top-level fields names: what an area's
// Export leaves out of its read answer (timestamps and other values the server sets).
func WithoutFields(doc []byte, names ...string) ([]byte, error) {
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&fields); err != nil {
		return nil, fmt.Errorf("resource document: %w", err)
	}
	for _, n := range names {
		delete(fields, n)
	}
	return json.Marshal(fields)
}

// BodyError is a resource document that the generated decoder or validator of an operation's
// body refused; the handler words it as that operation's body error, with the resource's place
// in front.
type BodyError struct {
	Operation string // the operationId whose body the resource is
	Body      []byte
	Err       error
}

func (e *BodyError) Error() string { return e.Err.Error() }
func (e *BodyError) Unwrap() error { return e.Err }

// DecodeBody decodes doc into v, the body type of operation, and runs its generated validator
// when it has one: the bounds the individual operation's body has. Errors are *BodyError.
func DecodeBody(operation string, doc []byte, v interface{ UnmarshalJSON([]byte) error }) error {
	if err := v.UnmarshalJSON(doc); err != nil {
		return &BodyError{Operation: operation, Body: doc, Err: err}
	}
	if checked, ok := v.(interface{ Validate() error }); ok {
		if err := checked.Validate(); err != nil {
			return &BodyError{Operation: operation, Body: doc, Err: err}
		}
	}
	return nil
}

// DecodeBodyOf is DecodeBody for an operation whose body holds the resource under one field
// ({"connector": …}): doc, the resource, is decoded as the body {field: doc}, so that errors name
// the same paths as the operation's own.
func DecodeBodyOf(operation, field string, doc []byte, v interface{ UnmarshalJSON([]byte) error }) error {
	body, err := json.Marshal(map[string]json.RawMessage{field: doc})
	if err != nil {
		return &BodyError{Operation: operation, Body: doc, Err: err}
	}
	return DecodeBody(operation, body, v)
}

// Invalidf is apierror.Invalidf, for the areas' Prepare.
func Invalidf(format string, args ...any) error { return apierror.Invalidf(format, args...) }

func invalidf(format string, args ...any) error { return apierror.Invalidf(format, args...) }

// maxIDLength is the longest id a document may give a resource.
const maxIDLength = 128

// IDOf returns the "id" field of a resource document, or newID() when it has none. Ids the
// server makes are UUIDs; a document may give any id of 1 to 128 printable characters without
// '/', so that it can name the resource in a path.
//
// Errors: Invalid naming "id".
func IDOf(doc []byte, newID func() string) (string, error) {
	var field struct {
		ID *json.RawMessage `json:"id"`
	}
	if err := json.Unmarshal(doc, &field); err != nil || field.ID == nil || string(*field.ID) == "null" {
		return newID(), nil
	}
	var id string
	if err := json.Unmarshal(*field.ID, &id); err != nil {
		return "", invalidf("id: must be a string")
	}
	if err := CheckID(id); err != nil {
		return "", err
	}
	return id, nil
}

// CheckID checks an id given by a document (see IDOf).
//
// Errors: Invalid naming "id".
func CheckID(id string) error {
	if id == "" || len(id) > maxIDLength {
		return invalidf("id: must have 1 to %d characters (got %d)", maxIDLength, len(id))
	}
	for _, r := range id {
		if r < 0x20 || r == 0x7f || r == '/' {
			return invalidf("id: %q holds a control character or '/'", id)
		}
	}
	return nil
}

// Finisher is implemented by areas whose resources have a place among each other that Put does
// not set (the order of policies): Finish runs after an area's deletes and puts, when the area
// changed, with the document's resources of the area in document order.
type Finisher interface {
	Finish(ctx context.Context, tx *db.Tx, teamID int64, want []Resource) error
}

// WithFields returns the JSON object doc with the top-level fields of set added where doc has
// none: what an area's Prepare fills in before decoding a document that leaves out fields its
// read answer requires (values the server sets).
func WithFields(doc []byte, set map[string]any) ([]byte, error) {
	var fields map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&fields); err != nil {
		return nil, invalidf("body: %v", err)
	}
	for k, v := range set {
		if _, ok := fields[k]; ok {
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		fields[k] = b
	}
	return json.Marshal(fields)
}

// DeletesLast is implemented by areas that other areas refer to (view folders): an apply deletes
// their resources after every area's creates and replaces, so that a document can move what it
// keeps out of what it drops.
type DeletesLast interface {
	DeletesLast()
}

// DeleteOrderer is implemented by areas whose resources refer to others of the same area along
// a tree (dashboard folders to their parent folder): a prune deletes them in the order
// OrderDeletes leaves deletes in, given current, the team's resources of the area, so that what
// refers goes before what it refers to, whatever their ids.
type DeleteOrderer interface {
	OrderDeletes(deletes []Change, current []Resource)
}

// PutOrderer is implemented by areas whose resources refer to others of the same area that the
// document may list after them (a flow alert definition to the definitions it names): an apply
// creates and replaces the document's resources of the area in the order of the indexes of want
// that OrderPuts returns (each once), so that what a resource refers to is stored first. Errors
// still name a resource by its index in the document.
type PutOrderer interface {
	OrderPuts(want []Resource) []int
}

// Referrer is implemented by areas whose resources only refer to other areas' resources (a
// pair's default preset, the default dashboard, pins): applying an earlier area can undo such a
// reference although the plan leaves it unchanged (a preset moved to another pair loses its
// defaults, a pruned dashboard its pins). Recheck runs in place of Put for each resource of
// the area that the plan leaves unchanged, after the earlier areas were applied, and fails as
// Put would when what the resource refers to is no longer there.
type Referrer interface {
	Recheck(ctx context.Context, tx *db.Tx, teamID int64, r Resource) error
}

// Comparer is implemented by areas whose documents may leave out values the server draws when it
// stores a resource (the ids of parsing-rule subgroups and rules): Unchanged reports whether
// storing want would leave current, the team's resource of the same id, as it is. Other areas'
// resources are unchanged when their documents hold the same JSON value.
type Comparer interface {
	Unchanged(current, want Resource) bool
}
