package api

// operatorPermission is the x-permission of operations that the operator key guards. The other
// operations' x-permission is checked against the catalog when the document is read
// (readOperations).
const operatorPermission = "operator"
