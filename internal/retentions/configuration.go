package retentions

import (
	"context"
	"encoding/json"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/teamconfig"
)

// Configuration is the retention tags' part of a team's configuration document
// (teamconfig.Area): the team's names for the platform's tags, one {id, name} per tag the team
// renamed, checked by checkUpdate and stored by setName, as UpdateRetentionTags does. The tags
// themselves are the platform's: a rename cannot create one, and deleting a rename (prune) gives
// the tag its platform name back. Whether the team activated the tags is EnabledConfiguration's.
type Configuration struct{}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "retentionTags" }

// Permissions implements teamconfig.Area.
func (Configuration) Permissions() (read, write string) {
	return "logs.data-setup#low:ReadConfig", "logs.data-setup#low:UpdateConfig"
}

// Export implements teamconfig.Area.
func (Configuration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	var out []teamconfig.Resource
	err := eachName(ctx, q, teamID, func(id, name string) error {
		r := oas.RetentionTagRename{ID: id, Name: name}
		doc, err := r.MarshalJSON()
		out = append(out, teamconfig.Resource{ID: id, Name: name, Doc: doc})
		return err
	})
	return out, err
}

// Prepare implements teamconfig.Area: one element of UpdateRetentionTags's body, checked by
// checkUpdate.
func (Configuration) Prepare(_ context.Context, doc []byte, _ func() string) (teamconfig.Resource, error) {
	var in oas.RetentionTagRename
	if err := teamconfig.DecodeBody(oas.UpdateRetentionTagsOperation, doc, &in); err != nil {
		return teamconfig.Resource{}, err
	}
	if _, ok := tag(in.ID); !ok {
		ids, _ := json.Marshal([]string{defaults[0].ID, defaults[1].ID, defaults[2].ID, defaults[3].ID})
		return teamconfig.Resource{}, apierror.Invalidf("id: no retention tag %q; the tags are %s", in.ID, ids)
	}
	renames, err := checkUpdate(&oas.RetentionTagUpdate{RetentionUpdateElements: []oas.RetentionTagRename{in}})
	if err != nil {
		if e, ok := apierror.As(err); ok { // its paths name the element of an update
			return teamconfig.Resource{}, &apierror.Error{Kind: e.Kind, Message: trimElement(e.Message)}
		}
		return teamconfig.Resource{}, err
	}
	r := oas.RetentionTagRename{ID: renames[0].id, Name: renames[0].name}
	encoded, err := r.MarshalJSON()
	return teamconfig.Resource{ID: r.ID, Name: r.Name, Doc: encoded}, err
}

// trimElement drops the "retentionUpdateElements[0]." in front of checkUpdate's messages.
func trimElement(message string) string {
	const prefix = "retentionUpdateElements[0]."
	if len(message) > len(prefix) && message[:len(prefix)] == prefix {
		return message[len(prefix):]
	}
	return message
}

// Put implements teamconfig.Area.
func (Configuration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, _ bool) error {
	return setName(ctx, tx, teamID, r.ID, r.Name)
}

// Delete implements teamconfig.Area.
func (Configuration) Delete(ctx context.Context, tx *db.Tx, teamID int64, id string) error {
	return clearName(ctx, tx, teamID, id)
}

// EnabledConfiguration is whether the team activated retention tags, as part of a team's
// configuration document (teamconfig.Area, teamconfig.Single): {enableTags} as
// GetRetentionTagsEnabled answers it, always exported. true activates the tags as
// ActivateRetentionTags does; activation cannot be undone (no operation does), so false is
// refused for a team that activated them.
type EnabledConfiguration struct{}

// Key implements teamconfig.Area.
func (EnabledConfiguration) Key() string { return "retentionTagsEnabled" }

// Single implements teamconfig.Single.
func (EnabledConfiguration) Single() {}

// Permissions implements teamconfig.Area: those of GetRetentionTagsEnabled and
// ActivateRetentionTags.
func (EnabledConfiguration) Permissions() (read, write string) {
	return "logs.data-setup#low:ReadConfig", "logs.data-setup#low:UpdateConfig"
}

// enabledID names the team's activation in a plan.
const enabledID = "enabled"

func enabledResource(on bool) (teamconfig.Resource, error) {
	doc, err := (&oas.RetentionTagsEnabled{EnableTags: on}).MarshalJSON()
	return teamconfig.Resource{ID: enabledID, Doc: doc, Value: on}, err
}

// Export implements teamconfig.Area.
func (EnabledConfiguration) Export(ctx context.Context, q db.Querier, teamID int64) ([]teamconfig.Resource, error) {
	on, err := activated(ctx, q, teamID)
	if err != nil {
		return nil, err
	}
	r, err := enabledResource(on)
	return []teamconfig.Resource{r}, err
}

// Prepare implements teamconfig.Area.
//
// Errors: Invalid naming enableTags when it is not a boolean.
func (EnabledConfiguration) Prepare(_ context.Context, doc []byte, _ func() string) (teamconfig.Resource, error) {
	var in struct {
		EnableTags *bool `json:"enableTags"`
	}
	if err := json.Unmarshal(doc, &in); err != nil || in.EnableTags == nil {
		return teamconfig.Resource{}, apierror.Invalidf("enableTags: required, true or false")
	}
	return enabledResource(*in.EnableTags)
}

// Put implements teamconfig.Area: true activates the tags as ActivateRetentionTags does.
//
// Errors: Invalid naming enableTags for false when the team activated the tags.
func (EnabledConfiguration) Put(ctx context.Context, tx *db.Tx, teamID int64, r teamconfig.Resource, _ bool) error {
	if r.Value.(bool) {
		return activate(ctx, tx, teamID)
	}
	on, err := activated(ctx, tx, teamID)
	if err != nil {
		return err
	}
	if on {
		return apierror.Invalidf("enableTags: the team activated retention tags, and activation cannot be undone; the document must say true or leave retentionTagsEnabled out")
	}
	return nil
}

// Delete implements teamconfig.Area; the activation is never deleted.
func (EnabledConfiguration) Delete(context.Context, *db.Tx, int64, string) error { return nil }
