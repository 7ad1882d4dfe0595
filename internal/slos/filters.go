package slos

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/queryobject"
)

// filtersParameter is the list's query object: an array of filters, every one of which an SLO must
// match.
const filtersParameter = "filters"

const maxFilters = 100

var (
	valuesSchema = &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"values": {Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.String}},
	}}
	enumValuesSchema = func(enum ...string) *queryobject.Schema {
		return &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
			"values": {Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.String, Enum: enum}},
		}}
	}
	sloTypes     = []string{string(oas.SloTypeSLOTYPEREQUEST), string(oas.SloTypeSLOTYPEWINDOW)}
	productTypes = []string{string(oas.SloProductTypeSLOPRODUCTTYPEUNSPECIFIED), string(oas.SloProductTypeSLOPRODUCTTYPEAPM)}
	constFields  = []string{"SLO_CONST_FILTER_FIELD_UNSPECIFIED", constUserName, constSloName}

	// filtersSchema is the shape of the filters query object, for queryobject.Decode.
	filtersSchema = &queryobject.Schema{Kind: queryobject.Array, Elem: &queryobject.Schema{Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
		"field": {Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
			"constFilter":                {Kind: queryobject.String, Enum: constFields},
			"labelName":                  {Kind: queryobject.String},
			"sloType":                    {Kind: queryobject.Boolean},
			"productType":                {Kind: queryobject.Boolean},
			"serviceName":                {Kind: queryobject.String},
			"ownershipServiceValues":     valuesSchema,
			"ownershipEnvironmentValues": valuesSchema,
			"ownershipTeamValues":        valuesSchema,
		}},
		"predicate": {Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
			"is": {Kind: queryobject.Object, Fields: map[string]*queryobject.Schema{
				"stringValues":      valuesSchema,
				"typeValues":        enumValuesSchema(sloTypes...),
				"productTypeValues": enumValuesSchema(productTypes...),
			}},
		}},
	}}}
)

const (
	constUserName = "SLO_CONST_FILTER_FIELD_USER_NAME"
	constSloName  = "SLO_CONST_FILTER_FIELD_SLO_NAME"
)

// sloFilter is one item of the filters query object (it has no generated type).
type sloFilter struct {
	Field *struct {
		ConstFilter                *string      `json:"constFilter"`
		LabelName                  *string      `json:"labelName"`
		SloType                    *bool        `json:"sloType"`
		ProductType                *bool        `json:"productType"`
		ServiceName                *string      `json:"serviceName"`
		OwnershipServiceValues     *valueFilter `json:"ownershipServiceValues"`
		OwnershipEnvironmentValues *valueFilter `json:"ownershipEnvironmentValues"`
		OwnershipTeamValues        *valueFilter `json:"ownershipTeamValues"`
	} `json:"field"`
	Predicate *struct {
		Is *struct {
			StringValues      *valueFilter `json:"stringValues"`
			TypeValues        *valueFilter `json:"typeValues"`
			ProductTypeValues *valueFilter `json:"productTypeValues"`
		} `json:"is"`
	} `json:"predicate"`
}

type valueFilter struct {
	Values []string `json:"values"`
}

// match tells whether an SLO passes one filter.
type match func(oas.Slo) bool

// readFilters reads the list's filters from the request's query and returns one match per filter
// (none when the query has no filters).
//
// Errors: Invalid naming filters[i]… for a malformed query object, more than maxFilters filters, a
// field without exactly one alternative, a predicate missing, of the wrong kind or sent with a
// field that carries its own values, an UNSPECIFIED constant field, sloType or productType false,
// an empty labelName or serviceName, an unknown enumeration value, or a serviceName without a
// productType filter that includes SLO_PRODUCT_TYPE_APM.
func readFilters(ctx context.Context) ([]match, error) {
	doc, err := queryobject.Decode(queryobject.Values(ctx), filtersParameter, filtersSchema)
	if err != nil || doc == nil {
		return nil, err
	}
	var filters []sloFilter
	if err := json.Unmarshal(doc, &filters); err != nil {
		return nil, apierror.Invalidf("%s: must be an array of {field, predicate} objects as the list operation describes", filtersParameter)
	}
	if len(filters) > maxFilters {
		return nil, apierror.Invalidf("%s: must have at most %d items (got %d)", filtersParameter, maxFilters, len(filters))
	}
	apmListed := slices.ContainsFunc(filters, func(f sloFilter) bool {
		return f.Field != nil && f.Field.ProductType != nil && f.Predicate != nil && f.Predicate.Is != nil &&
			f.Predicate.Is.ProductTypeValues != nil &&
			slices.Contains(f.Predicate.Is.ProductTypeValues.Values, string(oas.SloProductTypeSLOPRODUCTTYPEAPM))
	})
	out := make([]match, 0, len(filters))
	for i, f := range filters {
		m, err := compileFilter(fmt.Sprintf("%s[%d]", filtersParameter, i), f, apmListed)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// compileFilter checks one filter at path and returns its match.
func compileFilter(path string, f sloFilter, apmListed bool) (match, error) {
	if f.Field == nil {
		return nil, apierror.Invalidf("%s.field: is required", path)
	}
	fd := f.Field
	set := 0
	for _, ok := range []bool{fd.ConstFilter != nil, fd.LabelName != nil, fd.SloType != nil, fd.ProductType != nil,
		fd.ServiceName != nil, fd.OwnershipServiceValues != nil, fd.OwnershipEnvironmentValues != nil, fd.OwnershipTeamValues != nil} {
		if ok {
			set++
		}
	}
	if set != 1 {
		return nil, apierror.Invalidf("%s.field: must set exactly one of constFilter, labelName, sloType, productType, serviceName, ownershipServiceValues, ownershipEnvironmentValues and ownershipTeamValues (got %d)", path, set)
	}
	at := path + ".field"
	switch {
	case fd.ConstFilter != nil:
		values, err := predicateValues(path, f, "stringValues", at+".constFilter", nil)
		if err != nil {
			return nil, err
		}
		switch *fd.ConstFilter {
		case constSloName:
			return func(s oas.Slo) bool { return slices.Contains(values, s.Name) }, nil
		case constUserName:
			return func(s oas.Slo) bool { return slices.Contains(values, s.Creator.Or("")) }, nil
		default:
			return nil, apierror.Invalidf("%s.constFilter: must be %s or %s", at, constSloName, constUserName)
		}
	case fd.LabelName != nil:
		label := *fd.LabelName
		if label == "" {
			return nil, apierror.Invalidf("%s.labelName: must not be empty", at)
		}
		values, err := predicateValues(path, f, "stringValues", at+".labelName", nil)
		if err != nil {
			return nil, err
		}
		return func(s oas.Slo) bool {
			v, ok := s.Labels.Value[label]
			return ok && slices.Contains(values, v)
		}, nil
	case fd.SloType != nil:
		if !*fd.SloType {
			return nil, apierror.Invalidf("%s.sloType: must be true (it selects the SLO type as the field)", at)
		}
		values, err := predicateValues(path, f, "typeValues", at+".sloType", sloTypes)
		if err != nil {
			return nil, err
		}
		return func(s oas.Slo) bool { return slices.Contains(values, string(s.SloType.Value)) }, nil
	case fd.ProductType != nil:
		if !*fd.ProductType {
			return nil, apierror.Invalidf("%s.productType: must be true (it selects the product type as the field)", at)
		}
		values, err := predicateValues(path, f, "productTypeValues", at+".productType", productTypes)
		if err != nil {
			return nil, err
		}
		return func(s oas.Slo) bool { return slices.Contains(values, string(s.ProductType.Value)) }, nil
	case fd.ServiceName != nil:
		name := *fd.ServiceName
		if name == "" {
			return nil, apierror.Invalidf("%s.serviceName: must not be empty", at)
		}
		if !apmListed {
			return nil, apierror.Invalidf("%s.serviceName: needs a productType filter whose values include SLO_PRODUCT_TYPE_APM", at)
		}
		if err := noPredicate(path, f, at+".serviceName"); err != nil {
			return nil, err
		}
		return func(s oas.Slo) bool {
			return slices.Contains(s.ApmSli.Value.Services, name) || slices.Contains(s.ApmSliMetadata.Value.Services, name)
		}, nil
	default:
		name, values, tag := "ownershipServiceValues", fd.OwnershipServiceValues, func(o oas.SloOwnershipTags) oas.OptSloOwnershipTag { return o.Service }
		if fd.OwnershipEnvironmentValues != nil {
			name, values, tag = "ownershipEnvironmentValues", fd.OwnershipEnvironmentValues, func(o oas.SloOwnershipTags) oas.OptSloOwnershipTag { return o.Environment }
		} else if fd.OwnershipTeamValues != nil {
			name, values, tag = "ownershipTeamValues", fd.OwnershipTeamValues, func(o oas.SloOwnershipTags) oas.OptSloOwnershipTag { return o.Team }
		}
		if err := noPredicate(path, f, at+"."+name); err != nil {
			return nil, err
		}
		wanted := values.Values
		return func(s oas.Slo) bool {
			return slices.ContainsFunc(tag(s.OwnershipTags.Value).Value.ResolvedValues, func(v string) bool { return slices.Contains(wanted, v) })
		}, nil
	}
}

// predicateValues returns the values of the filter's predicate.is, which must set exactly the
// alternative kind (stringValues, typeValues or productTypeValues) that the field at fieldPath
// takes; enum, when not nil, lists the allowed values.
func predicateValues(path string, f sloFilter, kind, fieldPath string, enum []string) ([]string, error) {
	if f.Predicate == nil || f.Predicate.Is == nil {
		return nil, apierror.Invalidf("%s.predicate.is.%s: is required for the field %s", path, kind, fieldPath)
	}
	is := f.Predicate.Is
	var v *valueFilter
	for _, alt := range []struct {
		name   string
		values *valueFilter
	}{{"stringValues", is.StringValues}, {"typeValues", is.TypeValues}, {"productTypeValues", is.ProductTypeValues}} {
		if alt.name == kind {
			v = alt.values
		} else if alt.values != nil {
			return nil, apierror.Invalidf("%s.predicate.is.%s: the field %s takes %s, not %s", path, alt.name, fieldPath, kind, alt.name)
		}
	}
	if v == nil {
		return nil, apierror.Invalidf("%s.predicate.is.%s: is required for the field %s", path, kind, fieldPath)
	}
	for i, value := range v.Values {
		if enum != nil && !slices.Contains(enum, value) {
			return nil, apierror.Invalidf("%s.predicate.is.%s.values[%d]: must be one of %s (got %q)", path, kind, i, strings.Join(enum, ", "), value)
		}
	}
	return v.Values, nil
}

// noPredicate refuses a predicate beside a field that carries its own values.
func noPredicate(path string, f sloFilter, fieldPath string) error {
	if f.Predicate != nil && f.Predicate.Is != nil &&
		(f.Predicate.Is.StringValues != nil || f.Predicate.Is.TypeValues != nil || f.Predicate.Is.ProductTypeValues != nil) {
		return apierror.Invalidf("%s.predicate: must be omitted; the field %s carries its own values", path, fieldPath)
	}
	return nil
}

// matchesAll tells whether s passes every filter.
func matchesAll(s oas.Slo, filters []match) bool {
	for _, m := range filters {
		if !m(s) {
			return false
		}
	}
	return true
}
