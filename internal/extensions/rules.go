package extensions

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/queryobject"
)

// Bounds of a deployment (the reference API's).
const (
	maxListItems = 10000
	maxNameChars = 255
	maxTextChars = 65535
)

// objectParameter is the query object that carries a deployment in the object form.
const objectParameter = "extension_deployment"

// flatParameters are the query parameters of the flat form.
var flatParameters = []string{"id", "version", "item_ids", "applications", "subsystems"}

// deploymentSchema is the shape of extension_deployment, for queryobject.Decode.
var deploymentSchema = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
	"id":           {Kind: queryobject.String},
	"version":      {Kind: queryobject.String},
	"itemIds":      stringList,
	"applications": stringList,
	"subsystems":   stringList,
}}

var stringList = &queryobject.Schema{Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.String}}

// flatDeployment is the flat form as the generated decoder read it.
type flatDeployment struct {
	id, version                       oas.OptString
	itemIDs, applications, subsystems []string
}

// deployment is one deployment, from a request or from the database. The *Field names say
// where each value came from, for messages (`item_ids` or `extension_deployment.itemIds`).
type deployment struct {
	ID           string   `json:"id"`
	Version      string   `json:"version"`
	ItemIDs      []string `json:"itemIds"`
	Applications []string `json:"applications"`
	Subsystems   []string `json:"subsystems"`

	idField, versionField, itemsField, applicationsField, subsystemsField string
}

func (d deployment) wire() oas.ExtensionDeployment {
	return oas.ExtensionDeployment{
		ID: d.ID, Version: d.Version,
		ItemIds: nonNil(d.ItemIDs), Applications: nonNil(d.Applications), Subsystems: nonNil(d.Subsystems),
	}
}

// readAndCheck reads the deployment of a deploy or update request (readDeployment) and applies
// checkDeployment.
func (h *ExtensionHandler) readAndCheck(ctx context.Context, flat flatDeployment) (deployment, error) {
	d, err := readDeployment(queryobject.Values(ctx), flat)
	if err != nil {
		return d, err
	}
	return d, checkDeployment(h.catalog, d, auth.PrincipalFrom(ctx))
}

// readDeployment takes the deployment from the flat parameters or from extension_deployment
// (bracket, indexed, dot or JSON-document form), whichever the query uses.
//
// Errors: Invalid when the query uses both forms (naming both) or when extension_deployment is
// malformed.
func readDeployment(values map[string][]string, flat flatDeployment) (deployment, error) {
	var usedFlat []string
	for _, name := range flatParameters {
		if _, ok := values[name]; ok {
			usedFlat = append(usedFlat, name)
		}
	}
	usesObject := false
	for k := range values {
		if k == objectParameter || strings.HasPrefix(k, objectParameter+"[") || strings.HasPrefix(k, objectParameter+".") {
			usesObject = true
			break
		}
	}
	if usesObject && len(usedFlat) > 0 {
		return deployment{}, apierror.Invalidf("%s and %s: give the deployment either as the flat parameters (%s) or as %s, not both",
			objectParameter, strings.Join(usedFlat, ", "), strings.Join(flatParameters, ", "), objectParameter)
	}
	if !usesObject {
		return deployment{
			ID: flat.id.Or(""), Version: flat.version.Or(""),
			ItemIDs: flat.itemIDs, Applications: flat.applications, Subsystems: flat.subsystems,
			idField: "id", versionField: "version", itemsField: "item_ids",
			applicationsField: "applications", subsystemsField: "subsystems",
		}, nil
	}
	doc, err := queryobject.Decode(values, objectParameter, deploymentSchema)
	if err != nil {
		return deployment{}, err
	}
	var d deployment
	if err := json.Unmarshal(doc, &d); err != nil {
		return deployment{}, apierror.Invalidf("%s: must be an object with the strings id and version and the string arrays itemIds, applications and subsystems",
			objectParameter)
	}
	p := objectParameter + "."
	d.idField, d.versionField, d.itemsField = p+"id", p+"version", p+"itemIds"
	d.applicationsField, d.subsystemsField = p+"applications", p+"subsystems"
	return d, nil
}

// checkDeployment applies the deployment rules, in this order: id is required (at most 65535
// characters) and must name a catalog extension (NotFound otherwise); version is required and must
// be one of its revisions; itemIds has 1–10000 distinct items of that revision and includes every
// mandatory one; applications and subsystems have 0–10000 distinct names of 1–255 characters;
// finally the caller must hold the deploy permission of every listed item (Forbidden naming the
// item and the permission).
func checkDeployment(c *Catalog, d deployment, caller *auth.Principal) error {
	if d.ID == "" {
		return apierror.Invalidf("%s: is required", d.idField)
	}
	if n := utf8.RuneCountInString(d.ID); n > maxTextChars {
		return apierror.Invalidf("%s: must have at most %d characters (got %d)", d.idField, maxTextChars, n)
	}
	e, ok := c.lookup(d.ID)
	if !ok {
		return apierror.NotFoundf("%s: no extension %q in the catalog", d.idField, d.ID)
	}
	if d.Version == "" {
		return apierror.Invalidf("%s: is required", d.versionField)
	}
	var rev *revision
	versions := make([]string, 0, len(e.Revisions))
	for i := range e.Revisions {
		versions = append(versions, e.Revisions[i].Version)
		if e.Revisions[i].Version == d.Version {
			rev = &e.Revisions[i]
		}
	}
	if rev == nil {
		return apierror.Invalidf("%s: %q is not a version of extension %s (versions: %s)",
			d.versionField, clip(d.Version), e.ID, strings.Join(versions, ", "))
	}
	if err := checkItemIDs(e, rev, d); err != nil {
		return err
	}
	if err := checkNames(d.applicationsField, d.Applications); err != nil {
		return err
	}
	if err := checkNames(d.subsystemsField, d.Subsystems); err != nil {
		return err
	}
	for i, id := range d.ItemIDs {
		it, _ := rev.item(id)
		perm := deployPermission[it.PermissionResource]
		if !caller.Can(perm) {
			return apierror.Forbiddenf("%s[%d]: deploying item %q (%s) needs the permission %q, which the API key lacks",
				d.itemsField, i, id, it.PermissionResource, perm)
		}
	}
	return nil
}

func checkItemIDs(e *extension, rev *revision, d deployment) error {
	switch {
	case len(d.ItemIDs) == 0:
		return apierror.Invalidf("%s: must have at least 1 item (got 0)", d.itemsField)
	case len(d.ItemIDs) > maxListItems:
		return apierror.Invalidf("%s: must have at most %d items (got %d)", d.itemsField, maxListItems, len(d.ItemIDs))
	}
	seen := make(map[string]bool, len(d.ItemIDs))
	for i, id := range d.ItemIDs {
		at := fmt.Sprintf("%s[%d]", d.itemsField, i)
		if _, ok := rev.item(id); !ok {
			return apierror.Invalidf("%s: %q is not an item of extension %s version %s (items: %s)",
				at, clip(id), e.ID, rev.Version, strings.Join(itemIDs(rev), ", "))
		}
		if seen[id] {
			return apierror.Invalidf("%s: %q is listed twice", at, id)
		}
		seen[id] = true
	}
	for _, it := range rev.Items {
		if it.IsMandatory && !seen[it.ID] {
			return apierror.Invalidf("%s: must include the mandatory item %q of extension %s version %s",
				d.itemsField, it.ID, e.ID, rev.Version)
		}
	}
	return nil
}

func itemIDs(rev *revision) []string {
	out := make([]string, 0, len(rev.Items))
	for _, it := range rev.Items {
		out = append(out, it.ID)
	}
	return out
}

// checkNames checks applications or subsystems: 0–10000 distinct names of 1–255 characters.
func checkNames(field string, names []string) error {
	if len(names) > maxListItems {
		return apierror.Invalidf("%s: must have at most %d items (got %d)", field, maxListItems, len(names))
	}
	seen := make(map[string]bool, len(names))
	for i, n := range names {
		at := fmt.Sprintf("%s[%d]", field, i)
		switch chars := utf8.RuneCountInString(n); {
		case chars < 1:
			return apierror.Invalidf("%s: must have at least 1 character (got 0)", at)
		case chars > maxNameChars:
			return apierror.Invalidf("%s: must have at most %d characters (got %d)", at, maxNameChars, chars)
		}
		if seen[n] {
			return apierror.Invalidf("%s: %q is listed twice", at, n)
		}
		seen[n] = true
	}
	return nil
}

// checkKeptItems requires every kept item to be one of the deployment's items.
func checkKeptItems(kept []string, d deployment) error {
	held := make(map[string]bool, len(d.ItemIDs))
	for _, id := range d.ItemIDs {
		held[id] = true
	}
	for i, id := range kept {
		if !held[id] {
			items := append([]string(nil), d.ItemIDs...)
			sort.Strings(items)
			return apierror.Invalidf("keptExtensionItems[%d]: %q is not an item of the deployment of %s (items: %s)",
				i, clip(id), d.ID, strings.Join(items, ", "))
		}
	}
	return nil
}

// clip shortens a caller's value for a message.
func clip(s string) string {
	if utf8.RuneCountInString(s) <= 100 {
		return s
	}
	return string([]rune(s)[:100]) + "…"
}
