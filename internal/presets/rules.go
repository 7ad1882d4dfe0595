package presets

import (
	"slices"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/connectortypes"
	"github.com/mgmtapi/mgmtapi/internal/notifyexpr"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// systemTime is the createTime and updateTime of every system preset: they ship with the server
// and never change, so they carry one fixed instant rather than the team's creation time.
var systemTime = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// systemPair is the connector type and entity type of one system preset.
type systemPair struct {
	c oas.ConnectorType
	e oas.NotificationEntityType
}

// systemEntities are the entity types with system presets: those mgmtapi sends notifications of.
var systemEntities = []oas.NotificationEntityType{
	oas.NotificationEntityTypeALERTS, oas.NotificationEntityTypeTESTNOTIFICATIONS, oas.NotificationEntityTypeCASES,
}

// systemPairs are the pairs that have a system preset, in the order the list answers them: every
// type of the connector table, with each entity type it carries of systemEntities.
var systemPairs = func() []systemPair {
	var out []systemPair
	for _, k := range connectortypes.Kinds() {
		for _, e := range systemEntities {
			if k.Supports(e) {
				out = append(out, systemPair{k.Type, e})
			}
		}
	}
	return out
}()

// systemID is the public id of the system preset of a pair, as the vendor's clients name the
// alerts ones: preset_system_generic_https_alerts_empty, preset_system_email_alerts, and
// preset_system_<type>_alerts_basic for the others (preset_system_slack_alerts_basic, …); the
// other entity types follow the same pattern (preset_system_slack_cases_basic,
// preset_system_email_test_notifications, …).
func systemID(c oas.ConnectorType, e oas.NotificationEntityType) string {
	base := "preset_system_" + strings.ToLower(string(c)) + "_" + strings.ToLower(string(e))
	switch c {
	case oas.ConnectorTypeGENERICHTTPS:
		return base + "_empty"
	case oas.ConnectorTypeEMAIL:
		return base
	}
	return base + "_basic"
}

// systemAliases are the ids earlier versions served for system presets whose public id differs,
// by the public id: a read, a parentId or a router target by an old id finds the preset, and
// answers name the public id.
var systemAliases = map[string]string{
	"preset_system_generic_https_alerts_basic": "preset_system_generic_https_alerts_empty",
	"preset_system_email_alerts_basic":         "preset_system_email_alerts",
}

// CanonicalID returns the public id of a system preset named by an id earlier versions served,
// and any other id as it is.
func CanonicalID(id string) string {
	if public, ok := systemAliases[id]; ok {
		return public
	}
	return id
}

// systemTemplates are the title and description templates of the system presets of an entity
// type (a test notification is marked as one when it is sent: delivery's markTest).
var systemTemplates = map[oas.NotificationEntityType][2]string{
	oas.NotificationEntityTypeALERTS:            {"[{{alert.status}}] {{alertDef.name}}", "{{alertDef.description}}"},
	oas.NotificationEntityTypeTESTNOTIFICATIONS: {"[{{alert.status}}] {{alertDef.name}}", "{{alertDef.description}}"},
	oas.NotificationEntityTypeCASES:             {"[{{case.status}}] {{case.title}}", "{{case.readableId}}, priority {{case.priority}}"},
}

// entityLabel names an entity type in a system preset's name.
var entityLabel = map[oas.NotificationEntityType]string{
	oas.NotificationEntityTypeALERTS:            "alerts",
	oas.NotificationEntityTypeTESTNOTIFICATIONS: "test notifications",
	oas.NotificationEntityTypeCASES:             "cases",
}

// systemPreset returns the system preset of a pair. Every team has the same ones; they are not
// stored, so a team created at any time has them on either engine.
func systemPreset(pair systemPair) oas.Preset {
	c, e := pair.c, pair.e
	field := func(name, template string) oas.PresetMessageField {
		return oas.PresetMessageField{FieldName: oas.NewOptString(name), Template: oas.NewOptString(template)}
	}
	payload := ""
	if ty, ok := connectortypes.Lookup(c); ok {
		payload = ty.Payloads[0].Name
	}
	templates := systemTemplates[e]
	return oas.Preset{
		ID:               oas.NewOptString(systemID(c, e)),
		Name:             oas.NewOptString("Basic " + entityLabel[e] + " (" + string(c) + ")"),
		Description:      oas.NewOptString("The platform's default " + entityLabel[e] + " message for " + string(c) + " connectors."),
		ConnectorType:    oas.NewOptConnectorType(c),
		EntityType:       oas.NewOptNotificationEntityType(e),
		PresetType:       oas.NewOptPresetType(oas.PresetTypeSYSTEM),
		AttachmentConfig: oas.NewOptAttachmentConfig(oas.AttachmentConfig{Policy: oas.NewOptAttachmentPolicy(oas.AttachmentPolicyAUTO)}),
		ConfigOverrides: []oas.PresetConfigOverride{{
			PayloadType:   oas.NewOptString(payload),
			ConditionType: oas.NewOptPresetConditionType(oas.PresetConditionType{MatchEntityType: &oas.PresetConditionTypeMatchEntityType{}}),
			MessageConfig: oas.NewOptPresetMessageConfig(oas.PresetMessageConfig{Fields: []oas.PresetMessageField{
				field("title", templates[0]),
				field("description", templates[1]),
			}}),
		}},
		CreateTime: oas.NewOptDateTime(systemTime),
		UpdateTime: oas.NewOptDateTime(systemTime),
	}
}

// system returns the system preset with that id (its public id, or one earlier versions served).
func system(id string) (oas.Preset, bool) {
	id = CanonicalID(id)
	for _, pair := range systemPairs {
		if systemID(pair.c, pair.e) == id {
			return systemPreset(pair), true
		}
	}
	return oas.Preset{}, false
}

// attachmentTypes lists, per entity type, the attachments a notification can carry; an AUTO
// attachment policy includes those with DefaultEnabled.
var attachmentTypes = map[oas.NotificationEntityType][]oas.AttachmentType{
	oas.NotificationEntityTypeALERTS: {
		{Name: "alert_graph", DefaultEnabled: true},
		{Name: "log_example", DefaultEnabled: false},
	},
	oas.NotificationEntityTypeCASES: {
		{Name: "alert_graph", DefaultEnabled: true},
		{Name: "case_timeline", DefaultEnabled: false},
	},
	oas.NotificationEntityTypeTESTNOTIFICATIONS:  {},
	oas.NotificationEntityTypeOLLYSCHEDULEDTASKS: {},
}

// entityTypes are the entity types a notification can be about, in the enum's order.
var entityTypes = []oas.NotificationEntityType{
	oas.NotificationEntityTypeALERTS,
	oas.NotificationEntityTypeTESTNOTIFICATIONS,
	oas.NotificationEntityTypeCASES,
	oas.NotificationEntityTypeOLLYSCHEDULEDTASKS,
}

// MaxEntitySubTypes is the most sub-types ListEntitySubTypes answers.
const MaxEntitySubTypes = 100

// systemDefault returns the system preset of the pair, when it has one.
func systemDefault(c oas.ConnectorType, e oas.NotificationEntityType) (oas.Preset, bool) {
	pair := systemPair{c, e}
	if !slices.Contains(systemPairs, pair) {
		return oas.Preset{}, false
	}
	return systemPreset(pair), true
}

// checkPair requires both halves of a (connector type, entity type) pair.
//
// Errors: Invalid naming connector_type or entity_type.
func checkPair(c oas.OptConnectorType, e oas.OptNotificationEntityType) (oas.ConnectorType, oas.NotificationEntityType, error) {
	ct := c.Or(oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED)
	et := e.Or(oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED)
	if ct == oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED {
		return ct, et, apierror.Invalidf("connector_type: required; a default preset belongs to one connector type (e.g. SLACK)")
	}
	if et == oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED {
		return ct, et, apierror.Invalidf("entity_type: required; a default preset belongs to one entity type (e.g. ALERTS)")
	}
	return ct, et, nil
}

// checkPreset applies the rules the decoder cannot: name is required, SYSTEM is the server's,
// and each override's conditionType sets at most one condition (none is allowed since the newest
// public documents: the override then applies to every notification of the entity type). It returns the preset with every
// omitted field filled and the server's fields (id, times) cleared.
//
// Errors: Invalid naming the field path under preset.
func checkPreset(p oas.Preset) (oas.Preset, error) {
	if !p.Name.Set {
		return p, apierror.Invalidf("preset.name: required")
	}
	if p.PresetType.Or(oas.PresetTypePRESETTYPEUNSPECIFIED) == oas.PresetTypeSYSTEM {
		return p, apierror.Invalidf("preset.presetType: must be PRESET_TYPE_UNSPECIFIED or CUSTOM; only the server makes SYSTEM presets")
	}
	for i, o := range p.ConfigOverrides {
		ct, ok := o.ConditionType.Get()
		if !ok {
			continue
		}
		if ct.MatchEntityType != nil && ct.MatchEntityTypeAndSubType.Set {
			return p, apierror.Invalidf("preset.configOverrides[%d].conditionType: must set at most one of matchEntityType and matchEntityTypeAndSubType", i)
		}
	}
	// The payload type and the message fields are those of the connector type, from the table
	// the connector-schema operation answers (a preset of no connector type is not checked).
	for i, o := range p.ConfigOverrides {
		if err := connectortypes.CheckPayloadType(p.ConnectorType.Or(""), o.PayloadType.Or("")); err != nil {
			return p, apierror.Invalidf("preset.configOverrides[%d].payloadType: %v", i, err)
		}
		for j, f := range o.MessageConfig.Or(oas.PresetMessageConfig{}).Fields {
			if err := connectortypes.CheckMessageField(p.ConnectorType.Or(""), o.PayloadType.Or(""), f.FieldName.Or("")); err != nil {
				return p, apierror.Invalidf("preset.configOverrides[%d].messageConfig.fields[%d].fieldName: %v", i, j, err)
			}
			if err := notifyexpr.CheckTemplate(f.Template.Or("")); err != nil {
				return p, apierror.Invalidf("preset.configOverrides[%d].messageConfig.fields[%d].template: %v", i, j, err)
			}
		}
	}
	if p.ParentId.Or("") == "" {
		p.ParentId.Reset()
	} else {
		p.ParentId = oas.NewOptString(CanonicalID(p.ParentId.Value))
	}
	p.Description = oas.NewOptString(p.Description.Or(""))
	p.ConnectorType = oas.NewOptConnectorType(p.ConnectorType.Or(oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED))
	p.EntityType = oas.NewOptNotificationEntityType(p.EntityType.Or(oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED))
	p.PresetType = oas.NewOptPresetType(p.PresetType.Or(oas.PresetTypePRESETTYPEUNSPECIFIED))
	ac := p.AttachmentConfig.Or(oas.AttachmentConfig{})
	ac.Policy = oas.NewOptAttachmentPolicy(ac.Policy.Or(oas.AttachmentPolicyAUTO))
	p.AttachmentConfig = oas.NewOptAttachmentConfig(ac)
	if p.ConfigOverrides == nil {
		p.ConfigOverrides = []oas.PresetConfigOverride{}
	}
	p.CreateTime.Reset()
	p.UpdateTime.Reset()
	return p, nil
}

// summaryOf is a preset without its overrides.
func summaryOf(p oas.Preset) oas.PresetSummary {
	return oas.PresetSummary{
		ID: p.ID, Name: p.Name, Description: p.Description, ParentId: p.ParentId,
		ConnectorType: p.ConnectorType, EntityType: p.EntityType, PresetType: p.PresetType,
		AttachmentConfig: p.AttachmentConfig, CreateTime: p.CreateTime, UpdateTime: p.UpdateTime,
	}
}

// matches reports whether p passes the list filters; an UNSPECIFIED filter passes everything.
func matches(p oas.Preset, c oas.ConnectorType, e oas.NotificationEntityType) bool {
	if c != oas.ConnectorTypeCONNECTORTYPEUNSPECIFIED && p.ConnectorType.Or("") != c {
		return false
	}
	if e != oas.NotificationEntityTypeENTITYTYPEUNSPECIFIED && p.EntityType.Or("") != e {
		return false
	}
	return true
}
