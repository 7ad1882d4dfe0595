package integrations

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/catalogfiles"
)

// builtIn is the catalog that ships with mgmtapi: one definition per file.
//
//go:embed catalog/*.json
var builtIn embed.FS

// Catalog is the set of integration definitions a server offers: the built-in ones plus those of
// the operator's --integrations-dir. It is read once at start and never changes afterwards.
type Catalog struct {
	byKey   map[string]*definition
	ordered []*definition // by name, then key
}

// Len is the number of definitions in the catalog.
func (c *Catalog) Len() int { return len(c.ordered) }

// lookup returns the definition key of service, if the catalog has it.
func (c *Catalog) lookup(svc service, key string) (*definition, bool) {
	d, ok := c.byKey[key]
	if !ok || d.service() != svc {
		return nil, false
	}
	return d, true
}

// service is the public service an integration belongs to.
type service string

const (
	// integrationsService holds every definition but the contextual data ones.
	integrationsService service = "integrations"
	// contextualDataService holds the definitions of type contextualData and pushBasedContextualData.
	contextualDataService service = "contextual-data"
)

// definition is one catalog file. Field names are the file format's (docs/areas/integrations.md).
type definition struct {
	Key         string `json:"key"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Type is how the integration is deployed: one of definitionTypes.
	Type string `json:"type"`
	// ManagedVariant is the variant of a managed integration (DEFAULT when left out).
	ManagedVariant string     `json:"managedVariant"`
	Icon           string     `json:"icon"`
	DarkIcon       string     `json:"darkIcon"`
	Tags           []string   `json:"tags"`
	Docs           []docLink  `json:"docs"`
	IsNew          bool       `json:"isNew"`
	IsDeprecated   bool       `json:"isDeprecated"`
	Revisions      []revision `json:"revisions"`

	source string // where the file came from, for messages
}

type docLink struct {
	Name string `json:"name"`
	Link string `json:"link"`
}

// revision is one version of a definition.
type revision struct {
	Version string `json:"version"`
	// Lifecycle is one of lifecycles (GA when left out).
	Lifecycle string `json:"lifecycle"`
	Testing   bool   `json:"testing"`
	// Changes is the changelog entry of this version (Markdown).
	Changes string `json:"changes"`
	// Deployment is how this version is deployed: one of deployments ("" for none).
	Deployment string `json:"deployment"`
	// TemplateURL is the CloudFormation or Azure Resource Manager template.
	TemplateURL string `json:"templateUrl"`
	// HelmTemplate is a Helm chart's values template.
	HelmTemplate string `json:"helmTemplate"`
	// TerraformBlocks are the Terraform configuration blocks, by name.
	TerraformBlocks []namedText `json:"terraformBlocks"`
	// Commands are the installation commands (Helm, RUM browser SDK).
	Commands []command `json:"commands"`
	Groups   []group   `json:"groups"`
	// TestEndpoint names the TEXT field whose value is the HTTP(S) URL that a test sends one
	// request to; empty when the test only checks the parameters.
	TestEndpoint string  `json:"testEndpoint"`
	Fields       []field `json:"fields"`
}

type namedText struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

type command struct {
	Name     string `json:"name"`
	Command  string `json:"command"`
	Language string `json:"language"`
	Tooltip  string `json:"tooltip"`
}

type group struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// field is one typed parameter of a revision.
type field struct {
	// Name is the parameter's key in registrations.
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
	Readonly bool   `json:"readonly"`
	Hidden   bool   `json:"hidden"`
	Tooltip  string `json:"tooltip"`
	// Default is the value a registration that leaves the field out gets: a string, a number,
	// a boolean or a list of strings, as the type takes.
	Default        json.RawMessage `json:"default"`
	Options        []string        `json:"options"`
	AllowedPattern string          `json:"allowedPattern"`
	Placeholder    string          `json:"placeholder"`
	Group          string          `json:"group"`
	TemplateParam  string          `json:"templateParam"`
	Documentation  string          `json:"documentation"`

	pattern *regexp.Regexp
	value   *value // Default, decoded
}

var (
	definitionTypes = []string{"cloudformation", "arm", "managed", "untracked", "genericWebhook", "contextualData", "pushBasedContextualData"}
	managedVariants = []string{"DEFAULT", "GCP", "OAUTH", "CUSTOM"}
	lifecycles      = []string{"ALPHA", "PRIVATE_BETA", "PUBLIC_BETA", "GA", "DEPRECATED"}
	deployments     = []string{"", "cloudFormation", "azureArmTemplate", "helmChart", "terraform", "managedService", "rum"}
	languages       = []string{"", "BASH", "JAVASCRIPT"}
	keyPattern      = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,63}$`)
	versionPattern  = regexp.MustCompile(`^[0-9A-Za-z.+-]{1,64}$`)
	fieldPattern    = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_.-]{0,127}$`)
)

func (d *definition) service() service {
	if d.Type == "contextualData" || d.Type == "pushBasedContextualData" {
		return contextualDataService
	}
	return integrationsService
}

// revision returns the definition's revision of that version.
func (d *definition) revision(version string) (*revision, bool) {
	for i := range d.Revisions {
		if d.Revisions[i].Version == version {
			return &d.Revisions[i], true
		}
	}
	return nil, false
}

// newest is the last revision of the file that is not a testing one (the last one when all are).
func (d *definition) newest() *revision {
	for i := len(d.Revisions) - 1; i >= 0; i-- {
		if !d.Revisions[i].Testing {
			return &d.Revisions[i]
		}
	}
	return &d.Revisions[len(d.Revisions)-1]
}

func (r *revision) field(name string) (*field, bool) {
	for i := range r.Fields {
		if r.Fields[i].Name == name {
			return &r.Fields[i], true
		}
	}
	return nil, false
}

// LoadCatalog reads the built-in catalog and, when dir is not empty, every *.json file directly in
// dir (other files and subdirectories are ignored). Each file is one definition that must follow
// the catalog format (docs/areas/integrations.md); keys are unique across the whole catalog.
//
// Errors name the source (`built-in <file>` or `integrations-dir <path>`), the field path and the
// rule, e.g. `integrations-dir /x/foo.json: revisions[0].fields[2].type: ...`. A dir that is
// missing or unreadable is an error.
func LoadCatalog(dir string) (*Catalog, error) {
	c := &Catalog{byKey: map[string]*definition{}}
	if err := catalogfiles.Read(builtIn, "catalog/*.json", "integrations-dir", dir, c.add); err != nil {
		return nil, err
	}
	sort.Slice(c.ordered, func(i, j int) bool {
		a, b := c.ordered[i], c.ordered[j]
		if a.Name != b.Name {
			return a.Name < b.Name
		}
		return a.Key < b.Key
	})
	return c, nil
}

// add parses, checks and keeps one file.
func (c *Catalog) add(source string, b []byte) error {
	d, err := parseDefinition(b)
	if err == nil {
		err = checkDefinition(d)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", source, err)
	}
	d.source = source
	if prev, dup := c.byKey[d.Key]; dup {
		return fmt.Errorf("%s: key: %q is already defined by %s", source, d.Key, prev.source)
	}
	c.byKey[d.Key] = d
	c.ordered = append(c.ordered, d)
	return nil
}

// parseDefinition decodes one file, refusing JSON syntax errors, values of the wrong type, unknown
// fields and anything after the definition.
func parseDefinition(b []byte) (*definition, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var d definition
	if err := dec.Decode(&d); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			return nil, fmt.Errorf("invalid JSON at byte %d: %s", syn.Offset, syn.Error())
		case errors.As(err, &typ):
			return nil, fmt.Errorf("%s: must be %s, not %s", typ.Field, typeName(typ.Type.Kind().String()), typ.Value)
		}
		return nil, fmt.Errorf("invalid definition: %s", err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("invalid definition: more than one JSON value in the file")
	}
	return &d, nil
}

func typeName(kind string) string {
	switch kind {
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	case "bool":
		return "a boolean"
	case "string":
		return "a string"
	}
	return "a " + kind
}

// ruleError is a catalog rule broken at a field path.
func ruleError(at, format string, args ...any) error {
	return fmt.Errorf("%s: %s", at, fmt.Sprintf(format, args...))
}

// checkDefinition applies the catalog rules to one definition and decodes its defaults.
func checkDefinition(d *definition) error {
	switch {
	case !keyPattern.MatchString(d.Key):
		return ruleError("key", "%q must be 1–64 lowercase letters, digits and hyphens, starting with a letter or digit", d.Key)
	case strings.TrimSpace(d.Name) == "":
		return ruleError("name", "required")
	case !slices.Contains(definitionTypes, d.Type):
		return ruleError("type", "%q is not one of %s", d.Type, strings.Join(definitionTypes, ", "))
	case d.ManagedVariant != "" && d.Type != "managed":
		return ruleError("managedVariant", "only a managed integration has a variant")
	case d.ManagedVariant != "" && !slices.Contains(managedVariants, d.ManagedVariant):
		return ruleError("managedVariant", "%q is not one of %s", d.ManagedVariant, strings.Join(managedVariants, ", "))
	case len(d.Revisions) == 0:
		return ruleError("revisions", "at least one revision is required")
	}
	for i, l := range d.Docs {
		if err := checkLink(fmt.Sprintf("docs[%d].link", i), l.Link); err != nil {
			return err
		}
	}
	for i := range d.Revisions {
		at := fmt.Sprintf("revisions[%d]", i)
		r := &d.Revisions[i]
		for j := range i {
			if d.Revisions[j].Version == r.Version {
				return ruleError(at+".version", "%q is also revisions[%d]'s version", r.Version, j)
			}
		}
		if err := checkRevision(at, d, r); err != nil {
			return err
		}
	}
	return nil
}

func checkLink(at, link string) error {
	u, err := url.Parse(link)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ruleError(at, "%q must be an absolute http or https URL", link)
	}
	return nil
}

func checkRevision(at string, d *definition, r *revision) error {
	switch {
	case !versionPattern.MatchString(r.Version):
		return ruleError(at+".version", "%q must be 1–64 letters, digits, dots, plus and minus signs", r.Version)
	case r.Lifecycle != "" && !slices.Contains(lifecycles, r.Lifecycle):
		return ruleError(at+".lifecycle", "%q is not one of %s", r.Lifecycle, strings.Join(lifecycles, ", "))
	case !slices.Contains(deployments, r.Deployment):
		return ruleError(at+".deployment", "%q is not one of cloudFormation, azureArmTemplate, helmChart, terraform, managedService, rum (or empty)", r.Deployment)
	case (r.Deployment == "cloudFormation" || r.Deployment == "azureArmTemplate") && r.TemplateURL == "":
		return ruleError(at+".templateUrl", "required for a %s deployment", r.Deployment)
	case r.TemplateURL != "" && r.Deployment != "cloudFormation" && r.Deployment != "azureArmTemplate":
		return ruleError(at+".templateUrl", "only a cloudFormation or azureArmTemplate deployment has a template")
	case r.HelmTemplate != "" && r.Deployment != "helmChart":
		return ruleError(at+".helmTemplate", "only a helmChart deployment has a Helm template")
	case len(r.TerraformBlocks) > 0 && r.Deployment != "terraform":
		return ruleError(at+".terraformBlocks", "only a terraform deployment has configuration blocks")
	case r.Deployment == "managedService" && d.Type != "managed":
		return ruleError(at+".deployment", "managedService is the deployment of a managed integration only")
	}
	if r.TemplateURL != "" {
		if err := checkLink(at+".templateUrl", r.TemplateURL); err != nil {
			return err
		}
	}
	for i, c := range r.Commands {
		if !slices.Contains(languages, c.Language) {
			return ruleError(fmt.Sprintf("%s.commands[%d].language", at, i), "%q is not one of BASH, JAVASCRIPT (or empty)", c.Language)
		}
	}
	groups := map[string]bool{}
	for i, g := range r.Groups {
		if g.ID == "" || groups[g.ID] {
			return ruleError(fmt.Sprintf("%s.groups[%d].id", at, i), "must be a non-empty id of its own")
		}
		groups[g.ID] = true
	}
	for i := range r.Fields {
		f := &r.Fields[i]
		fat := fmt.Sprintf("%s.fields[%d]", at, i)
		for j := range i {
			if r.Fields[j].Name == f.Name {
				return ruleError(fat+".name", "%q is also fields[%d]'s name", f.Name, j)
			}
		}
		if f.Group != "" && !groups[f.Group] {
			return ruleError(fat+".group", "%q is not one of the revision's groups", f.Group)
		}
		if err := checkField(fat, f); err != nil {
			return err
		}
	}
	if r.TestEndpoint != "" {
		f, ok := r.field(r.TestEndpoint)
		if !ok || f.Type != "TEXT" {
			return ruleError(at+".testEndpoint", "%q must name a TEXT field of the revision", r.TestEndpoint)
		}
	}
	return nil
}

func checkField(at string, f *field) error {
	k, ok := kindOf(f.Type)
	switch {
	case !fieldPattern.MatchString(f.Name):
		return ruleError(at+".name", "%q must be 1–128 letters, digits, '_', '.' and '-', starting with a letter", f.Name)
	case !ok:
		return ruleError(at+".type", "%q is not one of %s", f.Type, strings.Join(fieldTypes, ", "))
	case f.Readonly && len(f.Default) == 0:
		return ruleError(at+".default", "a readonly field needs a default, the only value it takes")
	}
	if hasOptions(f.Type) != (len(f.Options) > 0) {
		if len(f.Options) == 0 {
			return ruleError(at+".options", "a %s field needs its options", f.Type)
		}
		return ruleError(at+".options", "a %s field takes no options", f.Type)
	}
	for i, o := range f.Options {
		if slices.Index(f.Options, o) != i {
			return ruleError(fmt.Sprintf("%s.options[%d]", at, i), "%q is listed twice", o)
		}
	}
	if f.AllowedPattern != "" {
		if k != kindString && k != kindList {
			return ruleError(at+".allowedPattern", "only text and list fields take a pattern")
		}
		re, err := regexp.Compile("^(?:" + f.AllowedPattern + ")$")
		if err != nil {
			return ruleError(at+".allowedPattern", "not a valid regular expression: %s", err.Error())
		}
		f.pattern = re
	}
	if len(f.Default) > 0 && string(f.Default) != "null" {
		v, err := decodeDefault(k, f.Default)
		if err != nil {
			return ruleError(at+".default", "%s", err.Error())
		}
		if err := checkValue(f, v); err != "" {
			return ruleError(at+".default", "%s", err)
		}
		f.value = v
	}
	return nil
}
