package integrations

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/apikeys"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// kind is how a field's value is held: the field types map to six kinds.
type kind string

const (
	kindString kind = "string"
	kindSecret kind = "secret"
	kindAPIKey kind = "apiKey"
	kindList   kind = "list"
	kindBool   kind = "boolean"
	kindNumber kind = "number"
)

// fieldTypes are the public field types, each with the kind of its values.
var fieldTypes = []string{"API_KEY", "TEXT", "LIST_TEXT", "MULTIPLE_SELECTION", "BOOLEAN", "SELECT", "JSON", "NUMBER",
	"SENSITIVE_DATA", "JSON_OBJECT_ARRAY", "AWS_REGION_SELECT", "AWS_REGION_MULTISELECT", "AWS_CLOUDWATCH_NAMESPACE_LIST"}

func kindOf(fieldType string) (kind, bool) {
	switch fieldType {
	case "TEXT", "SELECT", "JSON", "AWS_REGION_SELECT":
		return kindString, true
	case "SENSITIVE_DATA":
		return kindSecret, true
	case "API_KEY":
		return kindAPIKey, true
	case "LIST_TEXT", "MULTIPLE_SELECTION", "AWS_REGION_MULTISELECT", "AWS_CLOUDWATCH_NAMESPACE_LIST", "JSON_OBJECT_ARRAY":
		return kindList, true
	case "BOOLEAN":
		return kindBool, true
	case "NUMBER":
		return kindNumber, true
	}
	return "", false
}

// hasOptions says whether a field of that type lists the values it takes (the selections do,
// the others do not).
func hasOptions(fieldType string) bool {
	switch fieldType {
	case "SELECT", "AWS_REGION_SELECT", "MULTIPLE_SELECTION", "AWS_REGION_MULTISELECT":
		return true
	}
	return false
}

// value is one parameter's value, as stored: secrets in clear, an API key by its key's id.
type value struct {
	Kind   kind     `json:"kind"`
	String string   `json:"string,omitempty"`
	Bool   bool     `json:"bool,omitempty"`
	Number float64  `json:"number,omitempty"`
	List   []string `json:"list,omitempty"`
	KeyID  string   `json:"keyId,omitempty"`
}

// param is one stored parameter.
type param struct {
	Key string `json:"key"`
	value
}

// decodeDefault reads a field's default as its kind takes it.
func decodeDefault(k kind, raw json.RawMessage) (*value, error) {
	v := &value{Kind: k}
	var err error
	switch k {
	case kindString:
		err = json.Unmarshal(raw, &v.String)
	case kindBool:
		err = json.Unmarshal(raw, &v.Bool)
	case kindNumber:
		err = json.Unmarshal(raw, &v.Number)
	case kindList:
		err = json.Unmarshal(raw, &v.List)
	default:
		return nil, errors.New("a secret or API key field has no default")
	}
	if err != nil {
		return nil, fmt.Errorf("must be a %s as the field's type takes it", k)
	}
	return v, nil
}

// checkValue applies a field's rules (options, pattern, JSON) to a value of the field's kind; it
// returns the broken rule, or "" when the value is fine.
func checkValue(f *field, v *value) string {
	switch v.Kind {
	case kindString:
		return checkText(f, v.String)
	case kindNumber:
		if math.IsNaN(v.Number) || math.IsInf(v.Number, 0) {
			return "must be a finite number"
		}
	case kindList:
		for i, s := range v.List {
			if msg := checkText(f, s); msg != "" {
				return fmt.Sprintf("item %d: %s", i, msg)
			}
			if hasOptions(f.Type) && slices.Index(v.List, s) != i {
				return fmt.Sprintf("item %d: %q is chosen twice", i, s)
			}
		}
	}
	return ""
}

// checkText checks one text (a string value or one list item) against the field's rules.
func checkText(f *field, s string) string {
	if len(f.Options) > 0 && !slices.Contains(f.Options, s) {
		return fmt.Sprintf("%q is not one of the options (%s)", s, strings.Join(f.Options, ", "))
	}
	switch f.Type {
	case "JSON":
		if !json.Valid([]byte(s)) {
			return "must be a JSON document"
		}
	case "JSON_OBJECT_ARRAY":
		var obj map[string]any
		if json.Unmarshal([]byte(s), &obj) != nil {
			return "must be a JSON object"
		}
	}
	if f.pattern != nil && !f.pattern.MatchString(s) {
		return fmt.Sprintf("%q does not match the pattern %s", s, f.AllowedPattern)
	}
	return ""
}

// keyLookup finds a send-data key of the caller's team by id, or by value when id is empty.
type keyLookup func(id, value string) (apikeys.SendDataKey, error)

// teamKeys is the keyLookup of a team over q.
func teamKeys(ctx context.Context, q db.Querier, teamID int64) keyLookup {
	return func(id, value string) (apikeys.SendDataKey, error) {
		return apikeys.FindSendDataKey(ctx, q, teamID, id, value)
	}
}

// checked is a registration checked against its definition's revision.
type checked struct {
	def    *definition
	rev    *revision
	params []param // in the revision's field order
}

// checkMetadata checks a registration (at names it in messages, e.g. "metadata") of service svc
// against the catalog: the integration and version exist, every parameter is a field of that
// version once, with a value of the field's kind that follows its rules, the required fields are
// there and the others get their defaults. old is the instance being replaced or tested (nil for
// none): a secret or API key sent back as a placeholder keeps its value there.
//
// Errors: Invalid naming the field path and the parameter.
func checkMetadata(c *Catalog, svc service, md oas.OptIntegrationMetadata, at string, old []param, keys keyLookup) (checked, error) {
	m, ok := md.Get()
	if !ok {
		return checked{}, apierror.Invalidf("%s: required; it names the integration, its version and its parameters", at)
	}
	key := m.IntegrationKey.Or("")
	if key == "" {
		return checked{}, apierror.Invalidf("%s.integrationKey: required", at)
	}
	def, ok := c.lookup(svc, key)
	if !ok {
		return checked{}, apierror.Invalidf("%s.integrationKey: no %s %q in the catalog", at, svc.noun(), key)
	}
	version := m.Version.Or("")
	rev, ok := def.revision(version)
	if !ok {
		var versions []string
		for _, r := range def.Revisions {
			versions = append(versions, r.Version)
		}
		if version == "" {
			return checked{}, apierror.Invalidf("%s.version: required; %s has versions %s", at, key, strings.Join(versions, ", "))
		}
		return checked{}, apierror.Invalidf("%s.version: %s has no version %q; its versions are %s", at, key, version, strings.Join(versions, ", "))
	}
	given := map[string]value{}
	var list []oas.IntegrationParameter
	if p, ok := m.IntegrationParameters.Get(); ok {
		list = p.Parameters
	}
	for i, p := range list {
		pat := fmt.Sprintf("%s.integrationParameters.parameters[%d]", at, i)
		name := p.Key.Or("")
		if name == "" {
			return checked{}, apierror.Invalidf("%s.key: required", pat)
		}
		f, ok := rev.field(name)
		if !ok {
			return checked{}, apierror.Invalidf("%s.key: %q is not a parameter of %s %s; its parameters are %s", pat, name, key, version, fieldNames(rev))
		}
		if _, dup := given[name]; dup {
			return checked{}, apierror.Invalidf("%s.key: parameter %q is given twice", pat, name)
		}
		v, err := valueOf(p, f, pat, oldValue(old, name), keys)
		if err != nil {
			return checked{}, err
		}
		if msg := checkValue(f, &v); msg != "" {
			return checked{}, apierror.Invalidf("%s: parameter %q: %s", pat, name, msg)
		}
		if f.Readonly && !sameValue(v, *f.value) {
			return checked{}, apierror.Invalidf("%s: parameter %q is read-only; it takes only its default", pat, name)
		}
		given[name] = v
	}
	out := checked{def: def, rev: rev}
	for i := range rev.Fields {
		f := &rev.Fields[i]
		v, ok := given[f.Name]
		switch {
		case ok:
		case f.value != nil:
			v = *f.value
		case f.Required:
			return checked{}, apierror.Invalidf("%s.integrationParameters.parameters: parameter %q is required by %s %s", at, f.Name, key, version)
		default:
			continue
		}
		out.params = append(out.params, param{Key: f.Name, value: v})
	}
	return out, nil
}

func (s service) noun() string {
	if s == contextualDataService {
		return "contextual data integration"
	}
	return "integration"
}

func fieldNames(r *revision) string {
	var names []string
	for _, f := range r.Fields {
		names = append(names, f.Name)
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}

func oldValue(old []param, name string) *value {
	for i := range old {
		if old[i].Key == name {
			return &old[i].value
		}
	}
	return nil
}

func sameValue(a, b value) bool {
	return a.Kind == b.Kind && a.String == b.String && a.Bool == b.Bool && a.Number == b.Number && slices.Equal(a.List, b.List)
}

// valueOf reads the one value member of p as field f takes it.
func valueOf(p oas.IntegrationParameter, f *field, at string, old *value, keys keyLookup) (value, error) {
	var members []string
	for _, m := range []struct {
		name string
		set  bool
	}{{"stringValue", p.StringValue.Set}, {"booleanValue", p.BooleanValue.Set}, {"numericValue", p.NumericValue.Set},
		{"stringList", p.StringList.Set}, {"apiKey", p.ApiKey.Set}, {"sensitiveData", p.SensitiveData != nil}} {
		if m.set {
			members = append(members, m.name)
		}
	}
	k, _ := kindOf(f.Type)
	want := map[kind]string{kindString: "stringValue", kindSecret: "stringValue (or sensitiveData to keep the stored secret)",
		kindAPIKey: "apiKey or stringValue", kindList: "stringList", kindBool: "booleanValue", kindNumber: "numericValue"}[k]
	switch len(members) {
	case 0:
		return value{}, apierror.Invalidf("%s: parameter %q has no value; a %s field takes %s", at, f.Name, f.Type, want)
	case 1:
	default:
		return value{}, apierror.Invalidf("%s: parameter %q has %s; exactly one value member is allowed", at, f.Name, strings.Join(members, " and "))
	}
	wrong := apierror.Invalidf("%s.%s: parameter %q is a %s field, which takes %s", at, members[0], f.Name, f.Type, want)
	switch k {
	case kindString:
		if !p.StringValue.Set {
			return value{}, wrong
		}
		return value{Kind: k, String: p.StringValue.Value}, nil
	case kindBool:
		if !p.BooleanValue.Set {
			return value{}, wrong
		}
		return value{Kind: k, Bool: p.BooleanValue.Value}, nil
	case kindNumber:
		if !p.NumericValue.Set {
			return value{}, wrong
		}
		return value{Kind: k, Number: p.NumericValue.Value}, nil
	case kindList:
		if !p.StringList.Set {
			return value{}, wrong
		}
		return value{Kind: k, List: append([]string{}, p.StringList.Value.Values...)}, nil
	case kindSecret:
		switch {
		case p.StringValue.Set:
			return value{Kind: k, String: p.StringValue.Value}, nil
		case p.SensitiveData != nil && old != nil && old.Kind == kindSecret:
			return *old, nil
		case p.SensitiveData != nil:
			return value{}, apierror.Invalidf("%s.sensitiveData: parameter %q has no stored secret to keep; send it as stringValue", at, f.Name)
		}
		return value{}, wrong
	}
	// An API key: a send-data key of the team, named by id or value; the id is what is stored.
	var id, secret string
	switch {
	case p.ApiKey.Set:
		id, secret = p.ApiKey.Value.ID.Or(""), p.ApiKey.Value.Value.Or("")
		if id != "" && secret != "" {
			secret = "" // the id names the key; a value sent along is not needed
		}
		if id == "" && secret == "" {
			return value{}, apierror.Invalidf("%s.apiKey: parameter %q needs the id or the value of a send-data key of the team", at, f.Name)
		}
	case p.StringValue.Set:
		secret = p.StringValue.Value
	case p.SensitiveData != nil && old != nil && old.Kind == kindAPIKey:
		return *old, nil
	case p.SensitiveData != nil:
		return value{}, apierror.Invalidf("%s.sensitiveData: parameter %q has no stored key to keep; send apiKey", at, f.Name)
	default:
		return value{}, wrong
	}
	if secret == "" && id == "" {
		return value{}, apierror.Invalidf("%s.stringValue: parameter %q needs the value of a send-data key of the team", at, f.Name)
	}
	k2, err := keys(id, secret)
	if errors.Is(err, db.ErrNotFound) {
		if id != "" {
			return value{}, apierror.Invalidf("%s.apiKey.id: parameter %q: the team has no send-data key %q", at, f.Name, id)
		}
		return value{}, apierror.Invalidf("%s: parameter %q: the value is not a send-data key of the team", at, f.Name)
	}
	if err != nil {
		return value{}, err
	}
	return value{Kind: kindAPIKey, KeyID: k2.ID}, nil
}

// answerParams turns stored parameters into their answer: secrets as the placeholder, API keys
// by their key's id.
func answerParams(params []param) []oas.IntegrationParameter {
	out := make([]oas.IntegrationParameter, 0, len(params))
	for _, p := range params {
		a := oas.IntegrationParameter{Key: oas.NewOptString(p.Key)}
		switch p.Kind {
		case kindString:
			a.StringValue = oas.NewOptString(p.String)
		case kindSecret:
			a.SensitiveData = &oas.IntegrationSecretPlaceholder{}
		case kindAPIKey:
			a.ApiKey = oas.NewOptIntegrationApiKey(oas.IntegrationApiKey{ID: oas.NewOptString(p.KeyID)})
		case kindBool:
			a.BooleanValue = oas.NewOptBool(p.Bool)
		case kindNumber:
			a.NumericValue = oas.NewOptFloat64(p.Number)
		case kindList:
			a.StringList = oas.NewOptIntegrationStringList(oas.IntegrationStringList{Values: append([]string{}, p.List...)})
		}
		out = append(out, a)
	}
	return out
}
