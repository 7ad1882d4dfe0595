package access

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/mgmtapi/mgmtapi/internal/apierror"
	"github.com/mgmtapi/mgmtapi/internal/auth"
	"github.com/mgmtapi/mgmtapi/internal/db"
	"github.com/mgmtapi/mgmtapi/internal/oas"
	"github.com/mgmtapi/mgmtapi/internal/roles"
)

// wire is the member as answered: a member past their temporary access answers INACTIVE.
func (m member) wire(now time.Time) oas.TeamMember {
	status := statusInactive
	if m.activeAt(now) {
		status = statusActive
	}
	return oas.TeamMember{
		UserId: oas.NewOptString(m.userID), UserAccountId: oas.NewOptInt64(m.accountID),
		Username: oas.NewOptString(m.username), FirstName: oas.NewOptString(m.firstName),
		LastName: oas.NewOptString(m.lastName), Status: oas.NewOptTeamMemberStatus(oas.TeamMemberStatus(status)),
	}
}

// applyTemplate writes the fields of t that are set onto m, checked. On a create (create true)
// the username is required and a status left out or UNSPECIFIED is ACTIVE.
//
// Errors: Invalid naming the field under userTemplate.
func applyTemplate(m *member, t oas.TeamMemberTemplate, create bool) error {
	if v, ok := t.Username.Get(); ok || create {
		if err := CheckEmail("userTemplate.username", v); err != nil {
			return err
		}
		m.username = v
	}
	if v, ok := t.FirstName.Get(); ok {
		if err := checkLength("userTemplate.firstName", v, MaxNameLength, false); err != nil {
			return err
		}
		m.firstName = v
	}
	if v, ok := t.LastName.Get(); ok {
		if err := checkLength("userTemplate.lastName", v, MaxNameLength, false); err != nil {
			return err
		}
		m.lastName = v
	}
	if v, ok := t.Status.Get(); ok && v != oas.TeamMemberStatusUSERSTATUSUNSPECIFIED {
		m.status = string(v)
	} else if create {
		m.status = statusActive
	}
	if a, ok := t.AccessType.Get(); ok {
		temporary, isTemporary := a.TemporaryAccess.Get()
		switch {
		case isTemporary && a.PermanentAccess != nil:
			return apierror.Invalidf("userTemplate.accessType: give one of permanentAccess and temporaryAccess, not both")
		case isTemporary:
			at, ok := temporary.ExpireAt.Get()
			if !ok {
				return apierror.Invalidf("userTemplate.accessType.temporaryAccess.expireAt: is required for a temporary access")
			}
			m.expiresAt = at.UTC().Truncate(time.Microsecond)
		default:
			m.expiresAt = time.Time{}
		}
	}
	if t.AllowedLoginMode != nil {
		modes := make([]string, 0, len(t.AllowedLoginMode))
		for _, mode := range t.AllowedLoginMode {
			modes = append(modes, string(mode))
		}
		m.extra.LoginModes = modes
	}
	return nil
}

// CreateTeamMember adds a member to the caller's team, with a new userId (a UUID) and the team's
// next account id.
//
// Errors: NotFound when team_id is not the caller's team; Invalid naming the field (userTemplate
// required, username an email address, bounds); Conflict when the team has a member of that
// username (in any case).
func (h *AccessHandler) CreateTeamMember(ctx context.Context, req *oas.CreateTeamMemberRequest, params oas.CreateTeamMemberParams) error {
	caller := auth.PrincipalFrom(ctx)
	if err := sameTeam("team_id", params.TeamID, caller.TeamID); err != nil {
		return err
	}
	t, ok := req.UserTemplate.Get()
	if !ok {
		return apierror.Invalidf("userTemplate: is required (it holds the member's username)")
	}
	var m member
	if err := applyTemplate(&m, t, true); err != nil {
		return err
	}
	if mode, ok := req.OnboardingMode.Get(); ok {
		m.extra.OnboardingMode = string(mode)
	}
	err := h.write(ctx, caller.TeamID, func(tx *db.Tx) error {
		var err error
		if m.accountID, err = db.NextTeamNumber(ctx, tx, caller.TeamID, "member"); err != nil {
			return err
		}
		m.userID = tx.NewID()
		tx.AuditResource(strconv.FormatInt(m.accountID, 10))
		return insertMember(ctx, tx, caller.TeamID, m)
	})
	return conflictAs(err, "userTemplate.username: the team has a member %q already", m.username)
}

// UpdateTeamMember changes the fields of userTemplate that are given on the member userAccountId.
//
// Errors: NotFound when team_id is not the caller's team or the team has no such member; Invalid
// as CreateTeamMember, and naming userAccountId when it is missing; Conflict for a username
// another member has.
func (h *AccessHandler) UpdateTeamMember(ctx context.Context, req *oas.UpdateTeamMemberRequest, params oas.UpdateTeamMemberParams) (*oas.TeamMemberAccountIds, error) {
	caller := auth.PrincipalFrom(ctx)
	if err := sameTeam("team_id", params.TeamID, caller.TeamID); err != nil {
		return nil, err
	}
	id, ok := req.UserAccountId.Get()
	if !ok {
		return nil, apierror.Invalidf("userAccountId: is required")
	}
	t := req.UserTemplate.Or(oas.TeamMemberTemplate{})
	var username string
	err := h.write(ctx, caller.TeamID, func(tx *db.Tx) error {
		m, err := getMember(ctx, tx, caller.TeamID, id)
		if err != nil {
			return err
		}
		if err := applyTemplate(&m, t, false); err != nil {
			return err
		}
		username = m.username
		return updateMember(ctx, tx, caller.TeamID, m)
	})
	if err = notFoundAs(err, "userAccountId: the team has no member %d", id); err != nil {
		return nil, conflictAs(err, "userTemplate.username: the team has a member %q already", username)
	}
	return &oas.TeamMemberAccountIds{UserAccountIds: []int64{id}}, nil
}

// GetTeamMember answers one member of the caller's team.
//
// Errors: NotFound when team_id is not the caller's team or the team has no such member.
func (h *AccessHandler) GetTeamMember(ctx context.Context, params oas.GetTeamMemberParams) (*oas.TeamMemberResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	if err := sameTeam("team_id", params.TeamID, caller.TeamID); err != nil {
		return nil, err
	}
	m, err := getMember(ctx, h.db.Read(), caller.TeamID, params.UserAccountID)
	if err != nil {
		return nil, notFoundAs(err, "user_account_id: the team has no member %d", params.UserAccountID)
	}
	return &oas.TeamMemberResponse{User: oas.NewOptTeamMember(m.wire(h.db.Now()))}, nil
}

// UpdateTeamMemberStatuses sets one status on every listed member, all or none.
//
// Errors: NotFound when team_id is not the caller's team or names a member the team does not
// have (nothing changes); Invalid for a status left out or UNSPECIFIED, or no account id.
func (h *AccessHandler) UpdateTeamMemberStatuses(ctx context.Context, req *oas.UpdateTeamMemberStatusesRequest, params oas.UpdateTeamMemberStatusesParams) (*oas.TeamMemberAccountIds, error) {
	caller := auth.PrincipalFrom(ctx)
	if err := sameTeam("team_id", params.TeamID, caller.TeamID); err != nil {
		return nil, err
	}
	status, ok := req.Status.Get()
	if !ok || status == oas.TeamMemberStatusUSERSTATUSUNSPECIFIED {
		return nil, apierror.Invalidf("status: must be USER_STATUS_ACTIVE or USER_STATUS_INACTIVE")
	}
	if len(req.UserAccountIds) == 0 {
		return nil, apierror.Invalidf("userAccountIds: must name at least one member")
	}
	var missing int64
	err := h.write(ctx, caller.TeamID, func(tx *db.Tx) error {
		for _, id := range req.UserAccountIds {
			m, err := getMember(ctx, tx, caller.TeamID, id)
			if err != nil {
				missing = id
				return err
			}
			m.status = string(status)
			if err := updateMember(ctx, tx, caller.TeamID, m); err != nil {
				return err
			}
			tx.AuditResource(strconv.FormatInt(id, 10))
		}
		return nil
	})
	if err != nil {
		return nil, notFoundAs(err, "userAccountIds: the team has no member %d; no status was changed", missing)
	}
	return &oas.TeamMemberAccountIds{UserAccountIds: req.UserAccountIds}, nil
}

// SearchTeamMembers answers a page of the caller's team's members.
//
// Errors: NotFound when team_id is not the caller's team; Invalid for a page size over the bound.
func (h *AccessHandler) SearchTeamMembers(ctx context.Context, params oas.SearchTeamMembersParams) (*oas.TeamMemberSearchResponse, error) {
	caller := auth.PrincipalFrom(ctx)
	if err := sameTeam("team_id", params.TeamID, caller.TeamID); err != nil {
		return nil, err
	}
	token := ""
	if t, ok := params.PageToken.Get(); ok {
		token = strconv.FormatInt(t, 10)
	}
	size, sizeSet := params.PageSize.Get()
	limit, offset, err := pageOf(size, sizeSet, token)
	if err != nil {
		return nil, err
	}
	now := h.db.Now()
	f := memberFilter{usernamePart: strings.ToLower(params.Username.Or("")), now: now}
	if s, ok := params.Status.Get(); ok && s != oas.TeamMemberStatusUSERSTATUSUNSPECIFIED {
		f.status = string(s)
	}
	page, total, err := searchMembers(ctx, h.db.Read(), caller.TeamID, f, offset, limit)
	if err != nil {
		return nil, err
	}
	out := &oas.TeamMemberSearchResponse{Users: make([]oas.TeamMember, 0, len(page)), TotalCount: oas.NewOptInt64(total)}
	for _, m := range page {
		out.Users = append(out.Users, m.wire(now))
	}
	if next := offset + int64(len(page)); next < total {
		out.NextPageToken = oas.NewOptInt64(next)
	}
	return out, nil
}

// CheckAssignee refuses, read in q, a case assignee that is not an active member of the team. A
// team that has no member at all takes any user id (teams from before members existed,
// docs/decisions.md).
//
// Errors: Invalid naming field.
func CheckAssignee(ctx context.Context, q db.Querier, now time.Time, teamID int64, field, userID string) error {
	n, err := countMembers(ctx, q, teamID)
	if err != nil || n == 0 {
		return err
	}
	m, err := memberByUserID(ctx, q, teamID, userID)
	if err != nil {
		return notFoundAsInvalid(err, "%s: %q is not a member of the team (a member's userId, see the team's members)", field, userID)
	}
	if !m.activeAt(now) {
		return apierror.Invalidf("%s: the member %q is not active (revoked, or their temporary access has ended)", field, userID)
	}
	return nil
}

// CheckOwner refuses, read in q, a personal key's owner that is not a member of the team. A team
// without members takes any user id, as CheckAssignee.
//
// Errors: Invalid naming field.
func CheckOwner(ctx context.Context, q db.Querier, teamID int64, field, userID string) error {
	n, err := countMembers(ctx, q, teamID)
	if err != nil || n == 0 {
		return err
	}
	_, err = memberByUserID(ctx, q, teamID, userID)
	return notFoundAsInvalid(err, "%s: %q is not a member of the team (a member's userId, see the team's members)", field, userID)
}

func notFoundAsInvalid(err error, format string, args ...any) error {
	if err == db.ErrNotFound {
		return apierror.Invalidf(format, args...)
	}
	return err
}

// OwnerAccess returns the auth.OwnerAccessFunc that tells internal/auth what the team's member
// userID may do at now(), read in q: whether the team has members, whether it has this one,
// whether they are active, and the union of the permissions of their groups' roles.
func OwnerAccess(now func() time.Time) auth.OwnerAccessFunc {
	return func(ctx context.Context, q db.Querier, teamID int64, userID string) (auth.OwnerAccess, error) {
		var out auth.OwnerAccess
		n, err := countMembers(ctx, q, teamID)
		if err != nil || n == 0 {
			return out, err
		}
		out.TeamHasMembers = true
		m, err := memberByUserID(ctx, q, teamID, userID)
		if err == db.ErrNotFound {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out.Member, out.Active = true, m.activeAt(now())
		roleIDs, err := memberRoles(ctx, q, teamID, m.accountID)
		if err != nil {
			return out, err
		}
		for _, id := range roleIDs {
			_, perms, err := roles.Lookup(ctx, q, teamID, id)
			if err == db.ErrNotFound {
				continue // a role pruned away grants nothing
			}
			if err != nil {
				return out, err
			}
			out.Permissions = append(out.Permissions, perms...)
		}
		return out, nil
	}
}
