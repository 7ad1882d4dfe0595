package main

import (
	"strconv"

	"mgmtapi-ci/publicclients/foldersforviews"
	"mgmtapi-ci/publicclients/views"
)

func init() {
	register("folders_for_views_service", func(s *S) {
		c, err := foldersforviews.NewClientWithResponses(s.base, foldersforviews.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		name := unique("folder")
		r1, err := c.ViewsFoldersServiceCreateViewFolderWithResponse(s.ctx,
			body[foldersforviews.ViewsFoldersServiceCreateViewFolderJSONRequestBody](s, "create", `{"name":"`+name+`"}`))
		out := s.must("create", r1, err, 200)
		s.typed("create", r1.JSON200)
		id := str(out, "id")
		s.equal("create", out, "name", name)

		r2, err := c.ViewsFoldersServiceGetViewFolderWithResponse(s.ctx, id)
		got := s.must("read", r2, err, 200)
		s.typed("read", r2.JSON200)
		s.equal("read", got, "name", name)

		r3, err := c.ViewsFoldersServiceReplaceViewFolderWithResponse(s.ctx,
			body[foldersforviews.ViewsFoldersServiceReplaceViewFolderJSONRequestBody](s, "update", `{"id":"`+id+`","name":"`+name+`-2"}`))
		got = s.must("update", r3, err, 200)
		s.equal("update", got, "name", name+"-2")
		r4, err := c.ViewsFoldersServiceGetViewFolderWithResponse(s.ctx, id)
		got = s.must("read after update", r4, err, 200)
		s.equal("read after update", got, "name", name+"-2")

		r5, err := c.ViewsFoldersServiceListViewFoldersWithResponse(s.ctx)
		list := s.must("list", r5, err, 200)
		s.typed("list", r5.JSON200)
		s.contains("list", list, "folders", "id", id)

		r6, err := c.ViewsFoldersServiceDeleteViewFolderWithResponse(s.ctx, id)
		s.must("delete", r6, err, 200)
		r7, err := c.ViewsFoldersServiceGetViewFolderWithResponse(s.ctx, id)
		s.must("read after delete", r7, err, 404)
	})

	register("views_service", func(s *S) {
		c, err := views.NewClientWithResponses(s.base, views.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		name := unique("view")
		r1, err := c.ViewsServiceCreateViewWithResponse(s.ctx, body[views.ViewsServiceCreateViewJSONRequestBody](s, "create",
			`{"name":"`+name+`","searchQuery":{"query":"level:error"},"timeSelection":{"quickSelection":{"seconds":900}}}`))
		out := s.must("create", r1, err, 200)
		s.typed("create", r1.JSON200)
		s.equal("create", out, "name", name)
		idText := str(out, "id")
		id64, err := strconv.ParseInt(idText, 10, 32)
		if err != nil {
			s.failf("create", "id %q is not an int32", idText)
		}
		id := int32(id64)

		r2, err := c.ViewsServiceGetViewWithResponse(s.ctx, id)
		got := s.must("read", r2, err, 200)
		s.typed("read", r2.JSON200)
		s.equal("read", got, "name", name)
		s.equal("read", got, "searchQuery.query", "level:error")
		s.equal("read", got, "timeSelection.quickSelection.seconds", "900")

		r3, err := c.ViewsServiceReplaceViewWithResponse(s.ctx, id, body[views.ViewsServiceReplaceViewJSONRequestBody](s, "update",
			`{"name":"`+name+`-2","searchQuery":{"query":"level:warn"},"timeSelection":{"quickSelection":{"seconds":3600}}}`))
		s.must("update", r3, err, 200)
		r4, err := c.ViewsServiceGetViewWithResponse(s.ctx, id)
		got = s.must("read after update", r4, err, 200)
		s.equal("read after update", got, "name", name+"-2")
		s.equal("read after update", got, "searchQuery.query", "level:warn")
		s.equal("read after update", got, "timeSelection.quickSelection.seconds", "3600")

		r5, err := c.ViewsServiceListViewsWithResponse(s.ctx)
		list := s.must("list", r5, err, 200)
		s.typed("list", r5.JSON200)
		s.contains("list", list, "views", "id", idText)

		r6, err := c.ViewsServiceDeleteViewWithResponse(s.ctx, id)
		s.must("delete", r6, err, 200)
		r7, err := c.ViewsServiceGetViewWithResponse(s.ctx, id)
		s.must("read after delete", r7, err, 404)
	})
}
