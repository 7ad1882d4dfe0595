package connectors

import (
	"fmt"
	"slices"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
	"github.com/mgmtapi/mgmtapi/internal/notifyexpr"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// MaxConnectors is the most connectors a team holds (the public lists answer at most 800).
const MaxConnectors = 800

// checkConnector applies the rules the decoder cannot: name and type are required, the
// configuration fields are the type's (each at most once, every required one, each value meeting
// its field's rule), and each override names a supported entity type once and only fields that
// allow overrides. A sensitive value sent as connectortypes.Mask is taken from old (the stored connector of a
// replace; nil on create). It returns the connector as stored: server fields cleared, omitted
// fields filled, values unmasked.
//
// Errors: Invalid naming the field path under connector and the rule; it never quotes the value
// of a sensitive field.
func checkConnector(c oas.Connector, old *oas.Connector) (oas.Connector, error) {
	return checkConnectorMasks(c, old, false)
}

// checkConnectorKeepingMasks is checkConnector for a connector whose stored one is not read yet (a
// configuration document's): a sensitive value sent as Mask stays connectortypes.Mask, unchecked, for
// checkConnector to resolve against the stored connector when it is stored.
//
// Errors: those of checkConnector.
func checkConnectorKeepingMasks(c oas.Connector) (oas.Connector, error) {
	return checkConnectorMasks(c, nil, true)
}

func checkConnectorMasks(c oas.Connector, old *oas.Connector, keepMasks bool) (oas.Connector, error) {
	if !c.Name.Set {
		return c, apierror.Invalidf("connector.name: required")
	}
	ty, ok := connectortypes.Lookup(c.Type.Or(oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED))
	if !ok {
		return c, apierror.Invalidf("connector.type: required; one of %s", typeNames())
	}
	var stored map[string]string
	if old != nil && old.Type.Or("") == ty.Type {
		stored = valuesOf(*old)
	}
	cfg := c.ConnectorConfig.Or(oas.ConnectorConfig{})
	seen := map[string]bool{}
	fields := make([]oas.ConnectorConfigField, 0, len(cfg.Fields))
	for i, sent := range cfg.Fields {
		sentName, ok := sent.FieldName.Get()
		if !ok {
			return c, apierror.Invalidf("connector.connectorConfig.fields[%d].fieldName: required", i)
		}
		f, ok := ty.Field(sentName)
		if !ok {
			return c, apierror.Invalidf("connector.connectorConfig.fields[%d].fieldName: %q is not a field of %s connectors (%s)",
				i, sentName, ty.Type, ty.ConfigNames())
		}
		name := f.Name // a retired alias is stored under its public name
		if seen[name] {
			return c, apierror.Invalidf("connector.connectorConfig.fields[%d].fieldName: %q is given twice; each field at most once%s", i, name, aliasNote(ty, sentName))
		}
		seen[name] = true
		value := sent.Value.Or("")
		if f.Sensitive && value == connectortypes.Mask && keepMasks {
			fields = append(fields, oas.ConnectorConfigField{FieldName: oas.NewOptString(name), Value: oas.NewOptString(connectortypes.Mask)})
			continue
		}
		if f.Sensitive && value == connectortypes.Mask {
			prev, ok := stored[name]
			if !ok {
				return c, apierror.Invalidf("connector.connectorConfig.fields[%d].value: %s stands for the stored value of %s, and this connector has none; send the value itself",
					i, connectortypes.Mask, name)
			}
			value = prev
		}
		if err := connectortypes.CheckValue(f, value); err != nil {
			return c, apierror.Invalidf("connector.connectorConfig.fields[%d].value: field %s (%s) %v", i, name, f.Kind, err)
		}
		fields = append(fields, oas.ConnectorConfigField{FieldName: oas.NewOptString(name), Value: oas.NewOptString(value)})
	}
	for _, f := range ty.Config {
		if f.Required && !seen[f.Name] && !slices.ContainsFunc(f.RequiredUnless, func(n string) bool { return seen[n] }) {
			return c, apierror.Invalidf("connector.connectorConfig.fields: the required field %s of %s connectors is missing", f.Name, ty.Type)
		}
	}
	overrides := make([]oas.ConnectorConfigOverride, 0, len(c.ConfigOverrides))
	entities := map[oas.NotificationEntityType]bool{}
	for i, o := range c.ConfigOverrides {
		e := o.EntityType.Or(oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED)
		if e == oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED {
			return c, apierror.Invalidf("connector.configOverrides[%d].entityType: required; the entity type the templates apply to", i)
		}
		if !ty.Supports(e) {
			return c, apierror.Invalidf("connector.configOverrides[%d].entityType: %s connectors do not carry %s notifications", i, ty.Type, e)
		}
		if entities[e] {
			return c, apierror.Invalidf("connector.configOverrides[%d].entityType: %s has an override already; one per entity type", i, e)
		}
		entities[e] = true
		names := map[string]bool{}
		out := oas.ConnectorConfigOverride{EntityType: oas.NewOptNotificationEntityType(e), Fields: make([]oas.ConnectorTemplatedField, 0, len(o.Fields))}
		for j, tf := range o.Fields {
			sentName, ok := tf.FieldName.Get()
			if !ok {
				return c, apierror.Invalidf("connector.configOverrides[%d].fields[%d].fieldName: required", i, j)
			}
			f, ok := ty.Field(sentName)
			if !ok {
				return c, apierror.Invalidf("connector.configOverrides[%d].fields[%d].fieldName: %q is not a field of %s connectors (%s)",
					i, j, sentName, ty.Type, ty.ConfigNames())
			}
			name := f.Name
			if !f.AllowOverrides {
				return c, apierror.Invalidf("connector.configOverrides[%d].fields[%d].fieldName: field %s of %s connectors takes no template (%s)",
					i, j, name, ty.Type, overridable(ty))
			}
			if names[name] {
				return c, apierror.Invalidf("connector.configOverrides[%d].fields[%d].fieldName: %q is given twice; each field at most once%s", i, j, name, aliasNote(ty, sentName))
			}
			names[name] = true
			if err := notifyexpr.CheckTemplate(tf.Template.Or("")); err != nil {
				return c, apierror.Invalidf("connector.configOverrides[%d].fields[%d].template: %v", i, j, err)
			}
			out.Fields = append(out.Fields, oas.ConnectorTemplatedField{FieldName: oas.NewOptString(name), Template: oas.NewOptString(tf.Template.Or(""))})
		}
		overrides = append(overrides, out)
	}
	c.ConnectorConfig = oas.NewOptConnectorConfig(oas.ConnectorConfig{Fields: fields})
	c.ConfigOverrides = overrides
	c.Description = oas.NewOptString(c.Description.Or(""))
	c.Type = oas.NewOptConnectorType(ty.Type)
	c.TeamId.Reset()
	c.ResolvedConnectorConfig.Reset()
	c.CreateTime.Reset()
	c.UpdateTime.Reset()
	return c, nil
}

// aliasNote explains a field given twice when one of its names was a retired alias.
func aliasNote(ty connectortypes.Kind, sent string) string {
	if public, ok := ty.Aliases[sent]; ok {
		return fmt.Sprintf(" (%s is the retired name of %s)", sent, public)
	}
	return ""
}

// CheckID checks a chosen id of a connector or a preset: 1–128 characters, a letter or digit
// first, then letters, digits, _ or - (the public documents' pattern). The error is the rule
// broken, to follow the field's path in a message.
func CheckID(id string) error {
	if err := oas.NotificationCenterID(id).Validate(); err != nil {
		return fmt.Errorf("%q is not a valid id (1–128 characters, a letter or digit first, then letters, digits, _ or -)", id)
	}
	return nil
}

func typeNames() string {
	names := make([]string, len(connectortypes.Kinds()))
	for i, t := range connectortypes.Kinds() {
		names[i] = string(t.Type)
	}
	return strings.Join(names, ", ")
}

// overridable names the fields of the type that take templates, or says there are none.
func overridable(t connectortypes.Kind) string {
	var out []string
	for _, f := range t.Config {
		if f.AllowOverrides {
			out = append(out, f.Name)
		}
	}
	if len(out) == 0 {
		return "none of its fields does"
	}
	return "those that do: " + strings.Join(out, ", ")
}

// valuesOf are the configuration values of a stored connector, by field name, as sent (no
// defaults).
func valuesOf(c oas.Connector) map[string]string {
	out := map[string]string{}
	for _, f := range c.ConnectorConfig.Or(oas.ConnectorConfig{}).Fields {
		out[f.FieldName.Or("")] = f.Value.Or("")
	}
	return out
}

// resolved are the fields of the stored connector c in its type's order: the value sent, else the
// field's default; a field with neither is left out.
func resolved(c oas.Connector) []oas.ConnectorConfigField {
	ty, _ := connectortypes.Lookup(c.Type.Or(""))
	values := valuesOf(c)
	out := []oas.ConnectorConfigField{}
	for _, f := range ty.Config {
		v, ok := values[f.Name]
		if !ok {
			if f.Default == "" {
				continue
			}
			v = f.Default
		}
		out = append(out, oas.ConnectorConfigField{FieldName: oas.NewOptString(f.Name), Value: oas.NewOptString(v)})
	}
	return out
}

// shown returns fields as answered: sensitive values masked, or left out when drop is set.
func shown(ty connectortypes.Kind, fields []oas.ConnectorConfigField, drop bool) []oas.ConnectorConfigField {
	out := make([]oas.ConnectorConfigField, 0, len(fields))
	for _, f := range fields {
		def, _ := ty.Field(f.FieldName.Or(""))
		if def.Sensitive {
			if drop {
				continue
			}
			if f.Value.Or("") != "" {
				f.Value = oas.NewOptString(connectortypes.Mask)
			}
		}
		out = append(out, f)
	}
	return out
}

// answerOf is the stored connector c of the team as answered: sensitive values masked, with its
// resolved configuration.
func answerOf(c oas.Connector, teamID int64) oas.Connector {
	ty, _ := connectortypes.Lookup(c.Type.Or(""))
	res := resolved(c)
	c.ConnectorConfig = oas.NewOptConnectorConfig(oas.ConnectorConfig{Fields: shown(ty, c.ConnectorConfig.Or(oas.ConnectorConfig{}).Fields, false)})
	c.ResolvedConnectorConfig = oas.NewOptConnectorConfig(oas.ConnectorConfig{Fields: shown(ty, res, false)})
	c.TeamId = oas.NewOptInt64(teamID)
	if c.ConfigOverrides == nil {
		c.ConfigOverrides = []oas.ConnectorConfigOverride{}
	}
	return c
}

// summaryOf is the stored connector c of the team without its sensitive fields.
func summaryOf(c oas.Connector, teamID int64) oas.ConnectorSummary {
	ty, _ := connectortypes.Lookup(c.Type.Or(""))
	overrides := c.ConfigOverrides
	if overrides == nil {
		overrides = []oas.ConnectorConfigOverride{}
	}
	return oas.ConnectorSummary{
		ID: c.ID, TeamId: oas.NewOptInt64(teamID), Name: c.Name, Description: c.Description, Type: c.Type,
		ConnectorConfig:         oas.NewOptConnectorConfig(oas.ConnectorConfig{Fields: shown(ty, c.ConnectorConfig.Or(oas.ConnectorConfig{}).Fields, true)}),
		ResolvedConnectorConfig: oas.NewOptConnectorConfig(oas.ConnectorConfig{Fields: shown(ty, resolved(c), true)}),
		ConfigOverrides:         overrides,
		CreateTime:              c.CreateTime, UpdateTime: c.UpdateTime,
	}
}

// matches reports whether the stored connector passes the list filters; an UNSPECIFIED filter
// passes everything.
func matches(c oas.Connector, t oas.ConnectorType, e oas.NotificationEntityType) bool {
	if t != oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED && c.Type.Or("") != t {
		return false
	}
	ty, _ := connectortypes.Lookup(c.Type.Or(""))
	return ty.Supports(e)
}
