// Package blackbox holds the tests that probe the server from outside, as an attacker or an
// operator would, with requests generated from api/openapi.yaml at test time: the authorization
// matrix (every operation × no key, unknown, deactivated and deleted keys, a missing permission,
// an access-policy deny, another team's ids, the operator key on team operations and team keys
// on operator operations) and the HTTP-level mutation fuzzer. An operation added to the document
// is covered without a new test; one whose path parameter names a resource the fixture registry
// (fixtures_test.go) cannot create fails the matrix, naming the entry to add. The package has
// no code of its own.
package blackbox
