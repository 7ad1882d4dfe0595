package client

//go:generate go run ../api/ogeninput ../api/openapi.yaml --config ../api/ogen-client.yml --target . --package client --clean
