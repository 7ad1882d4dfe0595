package extensions

import (
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/go-faster/jx"

	"github.com/mgmtapi/mgmtapi/internal/catalogfiles"
)

// builtIn is the catalog that ships with mgmtapi: one extension per file.
//
//go:embed catalog/*.json
var builtIn embed.FS

// Catalog is the set of extensions a server offers: the built-in ones plus those of the
// operator's --extensions-dir. It is read once at start and never changes afterwards.
type Catalog struct {
	byID    map[string]*extension
	ordered []*extension // by name, then id
	loaded  []*extension // in load order, for the cross-checks
}

// Len is the number of extensions in the catalog.
func (c *Catalog) Len() int { return len(c.ordered) }

func (c *Catalog) lookup(id string) (*extension, bool) {
	e, ok := c.byID[id]
	return e, ok
}

// extension is one catalog file. Field names are the file format's (docs/areas/extensions.md).
type extension struct {
	ID            string           `json:"id"`
	Name          string           `json:"name"`
	Image         string           `json:"image"`
	DarkModeImage string           `json:"darkModeImage"`
	Integrations  []string         `json:"integrations"`
	Keywords      []string         `json:"keywords"`
	IsHidden      bool             `json:"isHidden"`
	Deprecation   *deprecation     `json:"deprecation"`
	Changelog     []changelogEntry `json:"changelog"`
	Revisions     []revision       `json:"revisions"`

	source string // where the file came from, for messages
}

type deprecation struct {
	Reason                string   `json:"reason"`
	ReplacementExtensions []string `json:"replacementExtensions"`
}

type changelogEntry struct {
	Version       string `json:"version"`
	DescriptionMd string `json:"descriptionMd"`
}

type revision struct {
	Version            string              `json:"version"`
	IsTesting          bool                `json:"isTesting"`
	IsNew              bool                `json:"isNew"`
	Description        string              `json:"description"`
	Excerpt            string              `json:"excerpt"`
	Labels             []string            `json:"labels"`
	IntegrationDetails []integrationDetail `json:"integrationDetails"`
	Binaries           []revisionBinary    `json:"binaries"`
	Items              []item              `json:"items"`
}

// item returns the revision's item with that id.
func (r *revision) item(id string) (*item, bool) {
	for i := range r.Items {
		if r.Items[i].ID == id {
			return &r.Items[i], true
		}
	}
	return nil, false
}

type integrationDetail struct {
	Name string `json:"name"`
	Link string `json:"link"`
}

type revisionBinary struct {
	Type string `json:"type"`
	Data string `json:"data"`
}

type item struct {
	ID                 string          `json:"id"`
	Name               string          `json:"name"`
	Description        string          `json:"description"`
	TargetDomain       string          `json:"targetDomain"`
	PermissionResource string          `json:"permissionResource"`
	IsMandatory        bool            `json:"isMandatory"`
	Data               json.RawMessage `json:"data"`
	Binaries           []itemBinary    `json:"binaries"`

	data map[string]jx.Raw // Data, decoded once for the answers
}

type itemBinary struct {
	Type     string `json:"type"`
	FileName string `json:"fileName"`
	Data     string `json:"data"`
}

// allowedResources maps each targetDomain to the permissionResources that fit it.
var allowedResources = map[string][]string{
	"ACTION":                    {"ACTION"},
	"ALERT":                     {"ALERT"},
	"ALERT_V3":                  {"ALERT"},
	"ENRICHMENT":                {"CUSTOM_ENRICHMENT", "GEO_ENRICHMENT", "SECURITY_ENRICHMENT", "RESOURCE_CLOUD_METADATA_ENRICHMENT"},
	"GRAFANA_DASHBOARD":         {"GRAFANA_DASHBOARD"},
	"KIBANA_DASHBOARD":          {"KIBANA_DASHBOARD"},
	"PARSING_RULE":              {"PARSING_RULE"},
	"SAVED_VIEW":                {"SAVED_VIEW"},
	"PLATFORM_CUSTOM_DASHBOARD": {"PLATFORM_CUSTOM_DASHBOARD"},
	"METRICS_RULE_GROUP":        {"METRICS_RULE_GROUP"},
	"EVENTS_TO_METRICS":         {"SPAN_EVENTS_TO_METRICS", "LOGS_EVENTS_TO_METRICS"},
}

// targetDomains lists the targetDomain values in the order the messages show them.
var targetDomains = []string{"ACTION", "ALERT", "ALERT_V3", "ENRICHMENT", "GRAFANA_DASHBOARD", "KIBANA_DASHBOARD",
	"PARSING_RULE", "SAVED_VIEW", "PLATFORM_CUSTOM_DASHBOARD", "METRICS_RULE_GROUP", "EVENTS_TO_METRICS"}

// deployPermission is the permission a key needs to deploy an item, by its permissionResource.
var deployPermission = map[string]string{
	"ACTION":                             "team-actions:UpdateConfig",
	"ALERT":                              "alerts:UpdateConfig",
	"CUSTOM_ENRICHMENT":                  "team-custom-enrichment:UpdateConfig",
	"GEO_ENRICHMENT":                     "geo-enrichment:UpdateConfig",
	"SECURITY_ENRICHMENT":                "security-enrichment:UpdateConfig",
	"RESOURCE_CLOUD_METADATA_ENRICHMENT": "cloud-metadata-enrichment:UpdateConfig",
	"GRAFANA_DASHBOARD":                  "grafana:Update",
	"KIBANA_DASHBOARD":                   "opensearch-dashboards:Update",
	"PARSING_RULE":                       "parsing-rules:UpdateConfig",
	"SAVED_VIEW":                         "team-saved-views:Update",
	"PLATFORM_CUSTOM_DASHBOARD":          "team-dashboards:Update",
	"METRICS_RULE_GROUP":                 "metrics.recording-rules:UpdateConfig",
	"SPAN_EVENTS_TO_METRICS":             "spans.events2metrics:UpdateConfig",
	"LOGS_EVENTS_TO_METRICS":             "logs.events2metrics:UpdateConfig",
}

var itemBinaryTypes = []string{"PREVIEW_IMAGE", "KIBANA_DASHBOARD_DEFINITION", "GRAFANA_DASHBOARD_DEFINITION",
	"ENRICHMENT_CSV", "PLATFORM_CUSTOM_DASHBOARD_DEFINITION"}

// dashboardBinaryTypes are the item binaries E12 answers only when asked to.
var dashboardBinaryTypes = map[string]bool{
	"KIBANA_DASHBOARD_DEFINITION":          true,
	"GRAFANA_DASHBOARD_DEFINITION":         true,
	"PLATFORM_CUSTOM_DASHBOARD_DEFINITION": true,
}

var (
	extensionIDPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)
	integrationPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
	versionPattern     = regexp.MustCompile(`^[0-9A-Za-z.+-]+$`)
	itemIDPattern      = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,127}$`)
	// reservedExtensionIDs are path segments of other operations next to GET /v1/{id}.
	reservedExtensionIDs = map[string]string{
		"deployed": "it is the path of the deployments",
		"all":      "it is the path of the list",
	}
)

// maxBinaryBytes bounds the data of every binary.
const maxBinaryBytes = 1 << 20

// maxInt stands for "no upper bound" in list checks.
const maxInt = int(^uint(0) >> 1)

// LoadCatalog reads the built-in catalog and, when dir is not empty, every *.json file directly in
// dir (other files and subdirectories are ignored). Every file must follow the catalog format; ids
// are unique across the whole catalog, and deprecation replacements must name another extension
// of the catalog that is not itself deprecated.
//
// Errors name the source (`built-in <file>` or `extensions-dir <path>`), the field path and the
// rule, e.g. `extensions-dir /x/foo.json: revisions[0].items[2].permissionResource: ...`. A dir
// that is missing or unreadable is an error.
func LoadCatalog(dir string) (*Catalog, error) {
	c := &Catalog{byID: map[string]*extension{}}
	if err := catalogfiles.Read(builtIn, "catalog/*.json", "extensions-dir", dir, c.add); err != nil {
		return nil, err
	}
	if err := c.checkReplacements(); err != nil {
		return nil, err
	}
	c.ordered = append([]*extension(nil), c.loaded...)
	sort.Slice(c.ordered, func(i, j int) bool {
		a, b := c.ordered[i], c.ordered[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.ID < b.ID
	})
	return c, nil
}

// add parses, checks and stores one file.
func (c *Catalog) add(source string, b []byte) error {
	e, err := parseExtension(b)
	if err == nil {
		err = checkExtension(e)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	e.source = source
	if prev, dup := c.byID[e.ID]; dup {
		return fmt.Errorf("%s: id: %q is already defined by %s", source, e.ID, prev.source)
	}
	c.byID[e.ID] = e
	c.loaded = append(c.loaded, e)
	return nil
}

// checkReplacements checks, once every file is read, that each replacement names another
// extension that is not itself deprecated.
func (c *Catalog) checkReplacements() error {
	for _, e := range c.loaded {
		if e.Deprecation == nil {
			continue
		}
		for i, id := range e.Deprecation.ReplacementExtensions {
			p := fmt.Sprintf("deprecation.replacementExtensions[%d]", i)
			r, ok := c.byID[id]
			switch {
			case !ok:
				return fmt.Errorf("%s: %s: no extension %q in the catalog", e.source, p, id)
			case r.Deprecation != nil:
				return fmt.Errorf("%s: %s: extension %q is itself deprecated; name what replaces it instead", e.source, p, id)
			}
		}
	}
	return nil
}

// parseExtension decodes one file, refusing JSON syntax errors (with line:column), values of the
// wrong type and unknown fields (with their path).
func parseExtension(b []byte) (*extension, error) {
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) {
			line, col := lineColumn(b, syn.Offset)
			return nil, fmt.Errorf("invalid JSON at line %d, column %d: %s", line, col, syn.Error())
		}
		return nil, fmt.Errorf("invalid JSON: %s", err.Error())
	}
	if err := checkShape(doc, reflect.TypeOf(extension{}), ""); err != nil {
		return nil, err
	}
	var e extension
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("invalid document: %s", err.Error())
	}
	return &e, nil
}

// lineColumn turns the offset of a json.SyntaxError (bytes read when it failed) into a 1-based
// line and column of the offending byte.
func lineColumn(b []byte, offset int64) (int, int) {
	at := int(offset) - 1
	if at < 0 {
		at = 0
	}
	if at > len(b) {
		at = len(b)
	}
	line, col := 1, 1
	for _, ch := range b[:at] {
		if ch == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

var rawMessageType = reflect.TypeOf(json.RawMessage(nil))

// checkShape walks a decoded JSON value against the Go type it will be decoded into: objects
// must have only the type's fields (matched exactly), and every value must have the field's JSON
// type. null counts as absent.
func checkShape(v any, t reflect.Type, at string) error {
	if v == nil {
		return nil
	}
	name := at
	if name == "" {
		name = "document"
	}
	if t == rawMessageType {
		if _, ok := v.(map[string]any); !ok {
			return fmt.Errorf("%s: must be a JSON object", name)
		}
		return nil
	}
	switch t.Kind() {
	case reflect.Pointer:
		return checkShape(v, t.Elem(), at)
	case reflect.Struct:
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: must be a JSON object", name)
		}
		fields := map[string]reflect.Type{}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.IsExported() && tag != "" && tag != "-" {
				fields[tag] = f.Type
			}
		}
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ft, known := fields[k]
			if !known {
				return fmt.Errorf("%s: unknown field", join(at, k))
			}
			if err := checkShape(obj[k], ft, join(at, k)); err != nil {
				return err
			}
		}
		return nil
	case reflect.Slice:
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: must be a JSON array", name)
		}
		for i, x := range arr {
			if err := checkShape(x, t.Elem(), fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
		return nil
	case reflect.String:
		if _, ok := v.(string); !ok {
			return fmt.Errorf("%s: must be a string", name)
		}
		return nil
	case reflect.Bool:
		if _, ok := v.(bool); !ok {
			return fmt.Errorf("%s: must be true or false", name)
		}
		return nil
	}
	return fmt.Errorf("%s: has no known type", name)
}

func join(at, field string) string {
	if at == "" {
		return field
	}
	return at + "." + field
}

// ruleError is a broken rule of the format at a field path.
func ruleError(at, format string, args ...any) error {
	return fmt.Errorf("%s: %s", at, fmt.Sprintf(format, args...))
}

// checkLength requires min to max characters (Unicode code points).
func checkLength(at, s string, min, max int) error {
	n := utf8.RuneCountInString(s)
	switch {
	case n < min && min == 1 && n == 0:
		return ruleError(at, "is required (%d–%d characters)", min, max)
	case n < min || n > max:
		return ruleError(at, "must have %d–%d characters (got %d)", min, max, n)
	}
	return nil
}

// checkStrings checks a list of strings: count bounds, each string's length and pattern (when
// not nil), and uniqueness when unique is set.
func checkStrings(at string, list []string, minItems, maxItems, minLen, maxLen int, pattern *regexp.Regexp, unique bool) error {
	switch {
	case len(list) < minItems:
		return ruleError(at, "must have at least %d item(s) (got %d)", minItems, len(list))
	case len(list) > maxItems:
		return ruleError(at, "must have at most %d items (got %d)", maxItems, len(list))
	}
	seen := map[string]bool{}
	for i, s := range list {
		p := fmt.Sprintf("%s[%d]", at, i)
		if err := checkLength(p, s, minLen, maxLen); err != nil {
			return err
		}
		if pattern != nil && !pattern.MatchString(s) {
			return ruleError(p, "%q must match %s", s, pattern)
		}
		if unique && seen[s] {
			return ruleError(p, "%q is listed twice", s)
		}
		seen[s] = true
	}
	return nil
}

// checkExtension applies every rule of the format that one file can be checked against alone.
func checkExtension(e *extension) error {
	switch {
	case e.ID == "":
		return ruleError("id", "is required")
	case !extensionIDPattern.MatchString(e.ID):
		return ruleError("id", "%q must match %s", e.ID, extensionIDPattern)
	case reservedExtensionIDs[e.ID] != "":
		return ruleError("id", "%q is reserved (%s)", e.ID, reservedExtensionIDs[e.ID])
	}
	if err := checkLength("name", e.Name, 1, 100); err != nil {
		return err
	}
	if err := checkLength("image", e.Image, 0, 2048); err != nil {
		return err
	}
	if err := checkLength("darkModeImage", e.DarkModeImage, 0, 2048); err != nil {
		return err
	}
	if err := checkStrings("integrations", e.Integrations, 1, maxInt, 1, 128, integrationPattern, true); err != nil {
		return err
	}
	if err := checkStrings("keywords", e.Keywords, 0, 50, 1, 64, nil, true); err != nil {
		return err
	}
	if d := e.Deprecation; d != nil {
		if err := checkLength("deprecation.reason", d.Reason, 1, 1000); err != nil {
			return err
		}
		if err := checkStrings("deprecation.replacementExtensions", d.ReplacementExtensions, 1, 10, 1, 64, nil, true); err != nil {
			return err
		}
		for i, id := range d.ReplacementExtensions {
			if id == e.ID {
				return ruleError(fmt.Sprintf("deprecation.replacementExtensions[%d]", i), "an extension cannot replace itself")
			}
		}
	}
	if len(e.Revisions) == 0 {
		return ruleError("revisions", "must have at least 1 revision")
	}
	versions := map[string]bool{}
	released := false
	for i := range e.Revisions {
		r := &e.Revisions[i]
		at := fmt.Sprintf("revisions[%d]", i)
		if err := checkRevision(at, r); err != nil {
			return err
		}
		if versions[r.Version] {
			return ruleError(at+".version", "%q is already the version of another revision", r.Version)
		}
		versions[r.Version] = true
		released = released || !r.IsTesting
	}
	if !released {
		return ruleError("revisions", "must hold at least one revision with isTesting false")
	}
	logged := map[string]bool{}
	for i, c := range e.Changelog {
		at := fmt.Sprintf("changelog[%d]", i)
		switch {
		case c.Version == "":
			return ruleError(at+".version", "is required")
		case !versions[c.Version]:
			return ruleError(at+".version", "%q names no revision of this extension", c.Version)
		case logged[c.Version]:
			return ruleError(at+".version", "%q already has a changelog entry", c.Version)
		}
		logged[c.Version] = true
		if err := checkLength(at+".descriptionMd", c.DescriptionMd, 1, 10000); err != nil {
			return err
		}
	}
	return nil
}

func checkRevision(at string, r *revision) error {
	if err := checkLength(at+".version", r.Version, 1, 64); err != nil {
		return err
	}
	if !versionPattern.MatchString(r.Version) {
		return ruleError(at+".version", "%q must match %s", r.Version, versionPattern)
	}
	if err := checkLength(at+".description", r.Description, 1, 10000); err != nil {
		return err
	}
	if err := checkLength(at+".excerpt", r.Excerpt, 0, 500); err != nil {
		return err
	}
	if err := checkStrings(at+".labels", r.Labels, 0, 20, 1, 64, nil, false); err != nil {
		return err
	}
	if len(r.IntegrationDetails) > 20 {
		return ruleError(at+".integrationDetails", "must have 0–20 items (got %d)", len(r.IntegrationDetails))
	}
	for i, d := range r.IntegrationDetails {
		p := fmt.Sprintf("%s.integrationDetails[%d]", at, i)
		if err := checkLength(p+".name", d.Name, 1, 128); err != nil {
			return err
		}
		if u, err := url.Parse(d.Link); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return ruleError(p+".link", "%q must be an absolute http or https URL", d.Link)
		}
	}
	if len(r.Binaries) > 20 {
		return ruleError(at+".binaries", "must have 0–20 items (got %d)", len(r.Binaries))
	}
	for i, b := range r.Binaries {
		p := fmt.Sprintf("%s.binaries[%d]", at, i)
		if b.Type != "KIBANA_INDEX_PATTERN" {
			return ruleError(p+".type", "%q must be KIBANA_INDEX_PATTERN", b.Type)
		}
		if len(b.Data) > maxBinaryBytes {
			return ruleError(p+".data", "must have at most %d bytes (got %d)", maxBinaryBytes, len(b.Data))
		}
	}
	if len(r.Items) < 1 || len(r.Items) > 500 {
		return ruleError(at+".items", "must have 1–500 items (got %d)", len(r.Items))
	}
	ids := map[string]bool{}
	for i := range r.Items {
		p := fmt.Sprintf("%s.items[%d]", at, i)
		it := &r.Items[i]
		if err := checkItem(p, it); err != nil {
			return err
		}
		if ids[it.ID] {
			return ruleError(p+".id", "%q is already the id of another item of this revision", it.ID)
		}
		ids[it.ID] = true
	}
	return nil
}

func checkItem(at string, it *item) error {
	if it.ID == "" {
		return ruleError(at+".id", "is required")
	}
	if !itemIDPattern.MatchString(it.ID) {
		return ruleError(at+".id", "%q must match %s", it.ID, itemIDPattern)
	}
	if err := checkLength(at+".name", it.Name, 1, 200); err != nil {
		return err
	}
	if err := checkLength(at+".description", it.Description, 0, 10000); err != nil {
		return err
	}
	allowed, ok := allowedResources[it.TargetDomain]
	if !ok {
		return ruleError(at+".targetDomain", "%q must be one of %s", it.TargetDomain, strings.Join(targetDomains, ", "))
	}
	if it.PermissionResource == "UNKNOWN" {
		return ruleError(at+".permissionResource", "UNKNOWN is refused; name the resource (allowed: %s)", strings.Join(allowed, ", "))
	}
	if !contains(allowed, it.PermissionResource) {
		if it.PermissionResource == "" {
			return ruleError(at+".permissionResource", "is required (allowed: %s)", strings.Join(allowed, ", "))
		}
		return ruleError(at+".permissionResource", "%s does not fit targetDomain %s (allowed: %s)",
			it.PermissionResource, it.TargetDomain, strings.Join(allowed, ", "))
	}
	if len(it.Data) == 0 || string(it.Data) == "null" {
		return ruleError(at+".data", "is required (a JSON object; may be {})")
	}
	var data map[string]json.RawMessage
	if err := json.Unmarshal(it.Data, &data); err != nil {
		return ruleError(at+".data", "must be a JSON object")
	}
	it.data = make(map[string]jx.Raw, len(data))
	for k, v := range data {
		it.data[k] = jx.Raw(v)
	}
	if len(it.Binaries) > 20 {
		return ruleError(at+".binaries", "must have 0–20 items (got %d)", len(it.Binaries))
	}
	for i, b := range it.Binaries {
		p := fmt.Sprintf("%s.binaries[%d]", at, i)
		if !contains(itemBinaryTypes, b.Type) {
			return ruleError(p+".type", "%q must be one of %s", b.Type, strings.Join(itemBinaryTypes, ", "))
		}
		if err := checkLength(p+".fileName", b.FileName, 1, 255); err != nil {
			return err
		}
		if len(b.Data) > maxBinaryBytes {
			return ruleError(p+".data", "must have at most %d bytes (got %d)", maxBinaryBytes, len(b.Data))
		}
		if _, err := base64.StdEncoding.DecodeString(b.Data); err != nil {
			return ruleError(p+".data", "must be base64 (standard alphabet, padded)")
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
