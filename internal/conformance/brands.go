package conformance

import (
	"regexp"
	"strings"
)

// Brand names never appear in mgmtapi's identifiers: a property name or an enum value of a public
// document that carries one is renamed before validation, the way our own document renames it
// (cxManaged → platformManaged, coralogixUserId → platformUserId, CX_CUSTOM_DASHBOARD →
// PLATFORM_CUSTOM_DASHBOARD). Only schema keywords that name JSON values are renamed:
// `properties` keys, `required` entries, `enum` values and discriminators; descriptions, $refs and
// component names are left alone.

var (
	// leadingBrand is a brand word that starts a camelCase or PascalCase name (cxUser, Coralogix).
	leadingBrand = regexp.MustCompile(`^(cx|Cx|coralogix|Coralogix)([A-Z0-9]|$)`)
	// innerBrand is a brand word that is a later word of a camelCase name (isCxManaged).
	innerBrand = regexp.MustCompile(`([a-z0-9])(Cx|Coralogix)([A-Z0-9]|$)`)
	// upperBrand is a brand word in an UPPER_SNAKE name (CX_CUSTOM_DASHBOARD, SOURCE_CORALOGIX).
	upperBrand = regexp.MustCompile(`(^|_)(CX|CORALOGIX)(_|$)`)
)

// RenameBrand returns name with its brand words replaced by "platform" in the case style of the
// name: cxEventKey → platformEventKey, isCxManaged → isPlatformManaged, CX_USER → PLATFORM_USER.
// Names without a brand word come back unchanged.
func RenameBrand(name string) string {
	if m := leadingBrand.FindStringSubmatch(name); m != nil {
		word := "platform"
		if strings.HasPrefix(m[1], "C") {
			word = "Platform"
		}
		name = word + name[len(m[1]):]
	}
	name = innerBrand.ReplaceAllString(name, "${1}Platform${3}")
	// Two passes: adjacent matches share their underscore (CX_CX).
	for range 2 {
		name = upperBrand.ReplaceAllString(name, "${1}PLATFORM${3}")
	}
	return name
}

// renameBrandsInDocument renames, in place, the brand words of every schema of a decoded OpenAPI
// document: the schemas under components.schemas and every `schema` of parameters, headers and
// contents.
func renameBrandsInDocument(node any) {
	switch n := node.(type) {
	case map[string]any:
		for key, value := range n {
			switch key {
			case "example", "examples":
				continue
			case "schema":
				renameBrandsInSchema(value)
			case "schemas":
				if m, ok := value.(map[string]any); ok {
					for _, s := range m {
						renameBrandsInSchema(s)
					}
				}
			default:
				renameBrandsInDocument(value)
			}
		}
	case []any:
		for _, v := range n {
			renameBrandsInDocument(v)
		}
	}
}

// renameBrandsInSchema renames the brand words of one schema and of the schemas inside it.
func renameBrandsInSchema(node any) {
	schema, ok := node.(map[string]any)
	if !ok {
		return
	}
	if props, ok := schema["properties"].(map[string]any); ok {
		renamed := make(map[string]any, len(props))
		for name, sub := range props {
			renameBrandsInSchema(sub)
			renamed[RenameBrand(name)] = sub
		}
		schema["properties"] = renamed
	}
	for _, key := range []string{"required", "enum"} {
		if list, ok := schema[key].([]any); ok {
			for i, v := range list {
				if s, ok := v.(string); ok {
					list[i] = RenameBrand(s)
				}
			}
		}
	}
	if d, ok := schema["discriminator"].(map[string]any); ok {
		if name, ok := d["propertyName"].(string); ok {
			d["propertyName"] = RenameBrand(name)
		}
		if mapping, ok := d["mapping"].(map[string]any); ok {
			renamed := make(map[string]any, len(mapping))
			for k, v := range mapping {
				renamed[RenameBrand(k)] = v
			}
			d["mapping"] = renamed
		}
	}
	for _, key := range []string{"items", "additionalProperties", "not"} {
		renameBrandsInSchema(schema[key])
	}
	for _, key := range []string{"allOf", "oneOf", "anyOf"} {
		if list, ok := schema[key].([]any); ok {
			for _, sub := range list {
				renameBrandsInSchema(sub)
			}
		}
	}
}
