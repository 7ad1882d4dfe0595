package main

import "mgmtapi-ci/publicclients/actions"

func init() {
	// Actions as the vendor's Terraform provider writes them: create, read, replace, list, order,
	// an atomic batch (one whose last request is refused changes nothing), delete.
	register("actions_service", func(s *S) {
		c, err := actions.NewClientWithResponses(s.base, actions.WithRequestEditorFn(s.auth))
		if err != nil {
			s.failf("client", "%v", err)
		}
		create := func(step, name, extra string) string {
			r, err := c.ActionsServiceCreateActionWithResponse(s.ctx, body[actions.ActionsServiceCreateActionJSONRequestBody](s, step,
				`{"name":"`+name+`","url":"https://www.google.com/search?q={{$p.selected_value}}","sourceType":"SOURCE_TYPE_LOG",`+
					`"applicationNames":["app"],"subsystemNames":["sub"]`+extra+`}`))
			out := s.must(step, r, err, 200)
			s.typed(step, r.JSON200)
			s.equal(step, out, "action.name", name)
			s.present(step, out, "action.createdBy")
			id := str(out, "action.id")
			if id == "" {
				s.failf(step, "no id: %v", out)
			}
			return id
		}
		first := create("create an action", unique("google search action"), `,"isPrivate":false`)
		second := create("create a second action", unique("with fields"), `,"isPrivate":false,"urlFields":[{"name":"env","required":true}]`)

		step := "read the action"
		r1, err := c.ActionsServiceGetActionWithResponse(s.ctx, first)
		got := s.must(step, r1, err, 200)
		s.typed(step, r1.JSON200)
		s.equal(step, got, "action.id", first)
		s.equal(step, got, "action.url", "https://www.google.com/search?q={{$p.selected_value}}")
		s.equal(step, got, "action.subsystemNames.0", "sub")

		step = "replace the action"
		renamed := unique("bing search action")
		r2, err := c.ActionsServiceReplaceActionWithResponse(s.ctx, body[actions.ActionsServiceReplaceActionJSONRequestBody](s, step,
			`{"action":{"id":"`+first+`","name":"`+renamed+`","url":"https://www.bing.com/search?q={{$p.selected_value}}","isPrivate":false,"isHidden":true,"sourceType":"SOURCE_TYPE_LOG"}}`))
		out := s.must(step, r2, err, 200)
		s.typed(step, r2.JSON200)
		s.equal(step, out, "action.name", renamed)
		s.equal(step, out, "action.isHidden", "true")

		step = "refuse an unknown placeholder"
		r3, err := c.ActionsServiceCreateActionWithResponse(s.ctx, body[actions.ActionsServiceCreateActionJSONRequestBody](s, step,
			`{"name":"bad","url":"https://example.com/{{$q.nothing}}"}`))
		s.must(step, r3, err, 400)

		step = "order the actions"
		r4, err := c.ActionsServiceOrderActionsWithResponse(s.ctx, body[actions.ActionsServiceOrderActionsJSONRequestBody](s, step,
			`{"sharedActionsOrder":{"`+second+`":0,"`+first+`":1}}`))
		s.must(step, r4, err, 200)
		step = "list the actions in their order"
		r5, err := c.ActionsServiceListActionsWithResponse(s.ctx)
		list := s.must(step, r5, err, 200)
		s.typed(step, r5.JSON200)
		s.equal(step, list, "actions.0.id", second)
		s.equal(step, list, "actions.1.id", first)

		step = "a batch whose last request is refused changes nothing"
		r6, err := c.ActionsServiceAtomicBatchExecuteActionsWithResponse(s.ctx, body[actions.ActionsServiceAtomicBatchExecuteActionsJSONRequestBody](s, step,
			`{"requests":[{"delete":{"id":"`+second+`"}},{"create":{"name":"x","url":"ftp://example.com/"}}]}`))
		s.must(step, r6, err, 400)
		r7, err := c.ActionsServiceGetActionWithResponse(s.ctx, second)
		s.must(step, r7, err, 200)

		step = "an atomic batch"
		r8, err := c.ActionsServiceAtomicBatchExecuteActionsWithResponse(s.ctx, body[actions.ActionsServiceAtomicBatchExecuteActionsJSONRequestBody](s, step,
			`{"requests":[{"delete":{"id":"`+second+`"}},{"create":{"name":"`+unique("batch")+`","url":"https://example.com/{{$p.selected_value}}","isPrivate":true}}]}`))
		batch := s.must(step, r8, err, 200)
		s.typed(step, r8.JSON200)
		s.present(step, batch, "matchingResponses.0.delete")
		made := str(batch, "matchingResponses.1.create.action.id")
		if made == "" {
			s.failf(step, "no created action: %v", batch)
		}
		r9, err := c.ActionsServiceGetActionWithResponse(s.ctx, second)
		s.must(step, r9, err, 404)

		for _, id := range []string{first, made} {
			step = "delete an action"
			r, err := c.ActionsServiceDeleteActionWithResponse(s.ctx, id)
			s.must(step, r, err, 200)
			r2, err := c.ActionsServiceGetActionWithResponse(s.ctx, id)
			s.must("read a deleted action", r2, err, 404)
		}
	})
}
