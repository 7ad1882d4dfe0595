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
// the tag its platform name back. Whether the team activated the tags is not part of it.
type Configuration struct{}

// Key implements teamconfig.Area.
func (Configuration) Key() string { return "retentionTags" }

// Permissions implements teamconfig.Area.
func (Configuration) Permissions() (read, write string) {
	return "retention-tags:ReadConfig", "retention-tags:Manage"
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
