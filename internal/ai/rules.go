package ai

import (
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// Bounds of a team's AI resources (ours: the public documents give none; docs/limits.md).
const (
	MaxApplications      = 1000
	MaxEvaluations       = 1000
	MaxCustomEvaluations = 1000
	// MaxPricedModels is the most models a team's pricing names.
	MaxPricedModels = 1000
	// MaxPrice is the largest price, in US dollars per million tokens.
	MaxPrice = 1_000_000
	// DefaultPageSize is the page size of the lists when the request leaves it out.
	DefaultPageSize = 200
)

// Policy types of a custom evaluation, as the vendor's Terraform provider accepts them
// (coralogix_ai_custom_evaluation, policy_type).
var policyTypes = []string{"quality", "security"}

// Scores of a custom evaluation's examples: the vendor's Terraform provider writes acceptable
// examples with score "0" and prohibited ones with "1", and reads no other.
const (
	AcceptableScore = "0"
	ViolatingScore  = "1"
)

// instructionPlaceholder is what the instructions of a custom evaluation must name: the part of
// the conversation the evaluator reads (the vendor's Terraform provider checks the same).
var instructionPlaceholder = regexp.MustCompile(`\{(prompt|response|chat_history)\}`)

// configVariant is one evaluation type: its enumeration value, its key in EvaluationConfig, and
// whether a config sets it.
type configVariant struct {
	Type string
	Key  string
	set  func(c *oas.AiEvaluationConfig) bool
}

// variants lists every evaluation type in the order of the public enumeration.
var variants = []configVariant{
	{"ALLOWED_TOPICS", "allowedTopics", func(c *oas.AiEvaluationConfig) bool { return c.AllowedTopics.Set }},
	{"COMPETITION", "competition", func(c *oas.AiEvaluationConfig) bool { return c.Competition.Set }},
	{"HALLUCINATION_COMPLETENESS", "hallucinationCompleteness", func(c *oas.AiEvaluationConfig) bool { return c.HallucinationCompleteness != nil }},
	{"HALLUCINATION_CONTEXT_ADHERENCE", "hallucinationContextAdherence", func(c *oas.AiEvaluationConfig) bool { return c.HallucinationContextAdherence != nil }},
	{"HALLUCINATION_CONTEXT_RELEVANCE", "hallucinationContextRelevance", func(c *oas.AiEvaluationConfig) bool { return c.HallucinationContextRelevance != nil }},
	{"HALLUCINATION_CORRECTNESS", "hallucinationCorrectness", func(c *oas.AiEvaluationConfig) bool { return c.HallucinationCorrectness != nil }},
	{"PII", "pii", func(c *oas.AiEvaluationConfig) bool { return c.Pii.Set }},
	{"PROMPT_INJECTION", "promptInjection", func(c *oas.AiEvaluationConfig) bool { return c.PromptInjection.Set }},
	{"RESTRICTED_TOPICS", "restrictedTopics", func(c *oas.AiEvaluationConfig) bool { return c.RestrictedTopics.Set }},
	{"SEXISM", "sexism", func(c *oas.AiEvaluationConfig) bool { return c.Sexism != nil }},
	{"SQL_ALLOWED_TABLES", "sqlAllowedTables", func(c *oas.AiEvaluationConfig) bool { return c.SqlAllowedTables.Set }},
	{"SQL_HALLUCINATION", "sqlHallucination", func(c *oas.AiEvaluationConfig) bool { return c.SqlHallucination != nil }},
	{"SQL_READ_ONLY", "sqlReadOnly", func(c *oas.AiEvaluationConfig) bool { return c.SqlReadOnly != nil }},
	{"SQL_RESTRICTED_TABLES", "sqlRestrictedTables", func(c *oas.AiEvaluationConfig) bool { return c.SqlRestrictedTables.Set }},
	{"TOXICITY", "toxicity", func(c *oas.AiEvaluationConfig) bool { return c.Toxicity != nil }},
	{"HALLUCINATION_TASK_ADHERENCE", "hallucinationTaskAdherence", func(c *oas.AiEvaluationConfig) bool { return c.HallucinationTaskAdherence != nil }},
	{"SQL_LOAD", "sqlLoad", func(c *oas.AiEvaluationConfig) bool { return c.SqlLoad.Set }},
	{"LANGUAGE_MISMATCH", "languageMismatch", func(c *oas.AiEvaluationConfig) bool { return c.LanguageMismatch != nil }},
	{"CUSTOM_EVALUATION", "customEvaluation", func(c *oas.AiEvaluationConfig) bool { return c.CustomEvaluation.Set }},
}

// EvaluationTypes are the evaluation types, in the order of the public enumeration.
func EvaluationTypes() []string {
	out := make([]string, len(variants))
	for i, v := range variants {
		out[i] = v.Type
	}
	return out
}

// evaluationType returns the type of the one variant config sets.
//
// Errors: Invalid naming "config" when it sets none or several.
func evaluationType(c *oas.AiEvaluationConfig) (string, error) {
	var set []string
	typ := ""
	for _, v := range variants {
		if v.set(c) {
			set = append(set, v.Key)
			typ = v.Type
		}
	}
	switch len(set) {
	case 1:
		return typ, nil
	case 0:
		return "", apierror.Invalidf("config: must set exactly one evaluation type's settings (allowedTopics, competition, pii, toxicity, …); it sets none")
	default:
		return "", apierror.Invalidf("config: must set exactly one evaluation type's settings; it sets %s", strings.Join(set, ", "))
	}
}

// checkTextList checks a list of names (topics, competitors, tables): at least one, no repeats.
func checkTextList(path string, list []string) error {
	if len(list) == 0 {
		return apierror.Invalidf("%s: at least one is required", path)
	}
	seen := map[string]int{}
	for i, s := range list {
		if strings.TrimSpace(s) == "" {
			return apierror.Invalidf("%s[%d]: must not be blank", path, i)
		}
		if j, ok := seen[s]; ok {
			return apierror.Invalidf("%s[%d]: %q repeats %s[%d]", path, i, s, path, j)
		}
		seen[s] = i
	}
	return nil
}

// checkConfig checks an evaluation's config (the generated validator has checked the bounds of
// each field) and returns its type.
//
// Errors: Invalid naming the field.
func checkConfig(c *oas.AiEvaluationConfig) (string, error) {
	typ, err := evaluationType(c)
	if err != nil {
		return "", err
	}
	switch {
	case c.AllowedTopics.Set:
		err = checkTextList("config.allowedTopics.topics", c.AllowedTopics.Value.Topics)
	case c.Competition.Set:
		err = checkTextList("config.competition.competitors", c.Competition.Value.Competitors)
	case c.RestrictedTopics.Set:
		err = checkTextList("config.restrictedTopics.topics", c.RestrictedTopics.Value.Topics)
	case c.SqlAllowedTables.Set:
		err = checkTextList("config.sqlAllowedTables.tables", c.SqlAllowedTables.Value.Tables)
	case c.SqlRestrictedTables.Set:
		err = checkTextList("config.sqlRestrictedTables.tables", c.SqlRestrictedTables.Value.Tables)
	case c.Pii.Set:
		err = checkPii(c.Pii.Value.Categories)
	case c.CustomEvaluation.Set:
		err = checkCustomSettings("config.customEvaluation", &c.CustomEvaluation.Value)
	}
	return typ, err
}

func checkPii(categories []oas.AiPiiCategory) error {
	if len(categories) == 0 {
		return apierror.Invalidf("config.pii.categories: at least one of PHONE_NUMBER, EMAIL_ADDRESS, CREDIT_CARD, IBAN_CODE, US_SSN is required")
	}
	seen := map[oas.AiPiiCategory]int{}
	for i, c := range categories {
		if j, ok := seen[c]; ok {
			return apierror.Invalidf("config.pii.categories[%d]: %s repeats config.pii.categories[%d]", i, c, j)
		}
		seen[c] = i
	}
	return nil
}

// checkCustomSettings checks the policy of a custom evaluation, whose fields are under prefix
// ("" for the top level of a custom evaluation's body).
//
// Errors: Invalid naming the field: policyType not quality or security, instructions missing,
// blank or naming none of {prompt}, {response}, {chat_history}, an example's score not 0 or 1.
func checkCustomSettings(prefix string, s *oas.AiCustomEvaluationSettings) error {
	at := func(field string) string {
		if prefix == "" {
			return field
		}
		return prefix + "." + field
	}
	pt, ok := s.PolicyType.Get()
	if !ok {
		return apierror.Invalidf("%s: required; one of %s", at("policyType"), strings.Join(policyTypes, ", "))
	}
	if !slices.Contains(policyTypes, pt) {
		return apierror.Invalidf("%s: %q is not a policy type; one of %s", at("policyType"), pt, strings.Join(policyTypes, ", "))
	}
	in, ok := s.Instructions.Get()
	if !ok || strings.TrimSpace(in) == "" {
		return apierror.Invalidf("%s: required and not blank; the evaluator's instructions, naming {prompt}, {response} or {chat_history}", at("instructions"))
	}
	if !instructionPlaceholder.MatchString(in) {
		return apierror.Invalidf("%s: must name at least one of {prompt}, {response} and {chat_history}, the part of the conversation the evaluator reads", at("instructions"))
	}
	for i, e := range s.Examples {
		score, ok := e.Score.Get()
		if !ok {
			return apierror.Invalidf("%s[%d].score: required; %s (acceptable) or %s (violates the policy)", at("examples"), i, AcceptableScore, ViolatingScore)
		}
		if score != AcceptableScore && score != ViolatingScore {
			return apierror.Invalidf("%s[%d].score: %q is not a score; %s (acceptable) or %s (violates the policy)", at("examples"), i, score, AcceptableScore, ViolatingScore)
		}
		if strings.TrimSpace(e.Conversation.Or("")) == "" {
			return apierror.Invalidf("%s[%d].conversation: required and not blank", at("examples"), i)
		}
	}
	return nil
}

// checkName checks a custom evaluation's name.
func checkName(name oas.OptString) error {
	if n, ok := name.Get(); !ok || strings.TrimSpace(n) == "" {
		return apierror.Invalidf("name: required and not blank")
	}
	return nil
}

// checkEvaluation checks a whole AI evaluation (as created, or as an update leaves it) and
// returns its type.
//
// Errors: Invalid naming the field.
func checkEvaluation(e *oas.AiEvaluation) (string, error) {
	if a, ok := e.Application.Get(); !ok || strings.TrimSpace(a) == "" {
		return "", apierror.Invalidf("application: required and not blank; the name of the AI application the evaluation runs on")
	}
	if s, ok := e.Subsystem.Get(); ok && strings.TrimSpace(s) == "" {
		return "", apierror.Invalidf("subsystem: must not be blank; leave it out for every subsystem")
	}
	if !e.Target.Set {
		return "", apierror.Invalidf("target: required; one of PROMPT, RESPONSE, CONVERSATION")
	}
	if t, ok := e.Threshold.Get(); ok && (math.IsNaN(t) || t < 0 || t > 1) {
		return "", apierror.Invalidf("threshold: must be from 0 to 1 (got %v)", t)
	}
	if !e.Config.Set {
		return "", apierror.Invalidf("config: required; the settings of exactly one evaluation type")
	}
	return checkConfig(&e.Config.Value)
}

// checkPrices checks a pricing's prices.
//
// Errors: Invalid naming the model and field.
func checkPrices(prices map[string]oas.AiModelPrice) error {
	if len(prices) > MaxPricedModels {
		return apierror.Invalidf("prices: at most %d models (got %d)", MaxPricedModels, len(prices))
	}
	for _, model := range slices.Sorted(maps.Keys(prices)) {
		p := prices[model]
		if strings.TrimSpace(model) == "" || len(model) > 256 {
			return apierror.Invalidf("prices: a model name must have 1 to 256 characters and not be blank (got %q)", model)
		}
		set := 0
		for _, f := range []struct {
			name string
			v    oas.OptFloat64
		}{
			{"inputPricePerMillionTokens", p.InputPricePerMillionTokens}, {"outputPricePerMillionTokens", p.OutputPricePerMillionTokens},
			{"cacheReadPricePerMillionTokens", p.CacheReadPricePerMillionTokens}, {"cacheWritePricePerMillionTokens", p.CacheWritePricePerMillionTokens},
		} {
			v, ok := f.v.Get()
			if !ok {
				continue
			}
			set++
			if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > MaxPrice {
				return apierror.Invalidf("prices[%q].%s: must be from 0 to %d US dollars per million tokens (got %v)", model, f.name, MaxPrice, v)
			}
		}
		if set == 0 {
			return apierror.Invalidf("prices[%q]: at least one price is required (inputPricePerMillionTokens, outputPricePerMillionTokens, cacheReadPricePerMillionTokens, cacheWritePricePerMillionTokens)", model)
		}
	}
	return nil
}

// updateMask returns the fields an update's mask names, in camelCase (snake_case names are
// converted), checked against fields; nil when there is no mask.
//
// Errors: Invalid naming "updateMask".
func updateMask(mask oas.OptString, fields []string) (map[string]bool, error) {
	m, ok := mask.Get()
	if !ok {
		return nil, nil
	}
	out := map[string]bool{}
	for _, name := range strings.Split(m, ",") {
		camel := camelCase(name)
		if !slices.Contains(fields, camel) {
			return nil, apierror.Invalidf("updateMask: %q is not a field that can be updated; the fields are %s", name, strings.Join(fields, ", "))
		}
		out[camel] = true
	}
	return out, nil
}

// camelCase turns snake_case into camelCase ("is_enabled" → "isEnabled"); other names pass.
func camelCase(s string) string {
	parts := strings.Split(s, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// touched reports whether an update changes field: named by the mask, or present in the body
// when there is no mask.
func touched(mask map[string]bool, field string, present bool) bool {
	if mask == nil {
		return present
	}
	return mask[field]
}

// checkUUID checks an id a configuration document gives.
func checkUUID(field, id string) error {
	if _, err := uuid.Parse(id); err != nil || len(id) != 36 {
		return apierror.Invalidf("%s: %q is not a UUID", field, id)
	}
	return nil
}

// page returns the bounds of page offset (from 0) of size items.
func page(size oas.OptInt32, offset oas.OptInt64) (limit, skip int64) {
	limit = int64(size.Or(DefaultPageSize))
	return limit, limit * offset.Or(0)
}
