// Package notifytesting serves the notification center's testing operations: trying a template
// or a routing condition against a sample event, with the code that renders and routes real
// notifications (internal/notifyexpr), and sending a test notification through a connector now:
// a sample event rendered by internal/messages (as routing renders) and delivered once by
// delivery.Sender (the worker's requests and outbound policy, no outbox). Nothing here is stored.
package notifytesting

import (
	"context"
	"errors"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/delivery"
	"github.com/mgmtapi/mgmtapi/internal/notifyexpr"
	"github.com/mgmtapi/mgmtapi/internal/oas"
)

// TestingHandler implements the notification-testing operations of oas.Handler.
type TestingHandler struct {
	db     *db.DB
	sender *delivery.Sender
}

// NewHandler returns the notification-testing operations; test notifications are sent by sender.
func NewHandler(database *db.DB, sender *delivery.Sender) *TestingHandler {
	return &TestingHandler{db: database, sender: sender}
}

// TestTemplateRender renders the request's template against the sample event of its entity type
// and answers the text, or a failure with a readable message and its reason. A missing template
// is the empty template.
//
// Errors: Invalid (entityType: a type mgmtapi sends no notifications of).
func (h *TestingHandler) TestTemplateRender(ctx context.Context, req oas.OptTestTemplateRenderRequest) (*oas.TestTemplateRenderAnswer, error) {
	body := req.Or(oas.TestTemplateRenderRequest{})
	entity, err := sampleOf(body.EntityType, body.EntitySubType.Or(""))
	if err != nil {
		return nil, err
	}
	out, err := notifyexpr.Render(body.Template.Or(""), entity)
	if err != nil {
		var e *notifyexpr.Error
		if !errors.As(err, &e) {
			return nil, err
		}
		return &oas.TestTemplateRenderAnswer{Result: oas.NewOptTestTemplateRenderResult(oas.TestTemplateRenderResult{
			Failure: oas.NewOptTestTemplateRenderFailure(oas.TestTemplateRenderFailure{
				Message: oas.NewOptString(e.Message),
				Reason:  oas.NewOptTemplateFailureReason(failureReason(e.Reason)),
			}),
		})}, nil
	}
	return &oas.TestTemplateRenderAnswer{Result: oas.NewOptTestTemplateRenderResult(oas.TestTemplateRenderResult{
		Success: oas.NewOptTestTemplateRenderSuccess(oas.TestTemplateRenderSuccess{RenderedValue: oas.NewOptString(out)}),
	})}, nil
}

// TestRoutingConditionValid checks the request's condition and evaluates it against the sample
// event of its entity type: success with the boolean, or failure saying why the condition is not
// valid (syntax, a field the event lacks, a value that is not a boolean, a bound passed).
//
// Errors: Invalid (template: missing; entityType: a type mgmtapi sends no notifications of).
func (h *TestingHandler) TestRoutingConditionValid(ctx context.Context, req oas.OptTestRoutingConditionRequest) (*oas.TestRoutingConditionResponse, error) {
	body := req.Or(oas.TestRoutingConditionRequest{})
	condition, ok := body.Template.Get()
	if !ok {
		return nil, apierror.Invalidf("template: a condition is required, for example alertDef.priority == 'P1'")
	}
	entity, err := sampleOf(body.EntityType, "")
	if err != nil {
		return nil, err
	}
	result, err := notifyexpr.EvalCondition(condition, entity)
	if err != nil {
		var e *notifyexpr.Error
		if !errors.As(err, &e) {
			return nil, err
		}
		return &oas.TestRoutingConditionResponse{Failure: oas.NewOptTestRoutingConditionResponseFailure(
			oas.TestRoutingConditionResponseFailure{Message: oas.NewOptString("Invalid condition: " + e.Message)})}, nil
	}
	return &oas.TestRoutingConditionResponse{Success: oas.NewOptTestRoutingConditionResponseSuccess(
		oas.TestRoutingConditionResponseSuccess{Result: oas.NewOptBool(result)})}, nil
}

func sampleOf(entityType oas.OptNotificationEntityType, subType string) (map[string]any, error) {
	entity, err := notifyexpr.SampleEntity(string(entityType.Or("")), subType)
	if err != nil {
		return nil, apierror.Invalidf("entityType: %v", err)
	}
	return entity, nil
}

// failureReason is the public reason of a template failure. Running out of steps or time is an
// invalid template (the message says which bound).
func failureReason(r notifyexpr.Reason) oas.TemplateFailureReason {
	switch r {
	case notifyexpr.ReasonFieldNotFound:
		return oas.TemplateFailureReasonFIELDNOTFOUND
	case notifyexpr.ReasonSourceTooLong:
		return oas.TemplateFailureReasonTEMPLATEEXCEEDSMAXLENGTH
	case notifyexpr.ReasonOutputTooLong:
		return oas.TemplateFailureReasonRENDEREDVALUEEXCEEDSMAXLENGTH
	}
	return oas.TemplateFailureReasonINVALIDTEMPLATE
}
