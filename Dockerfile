# mgmtapi's container image: one static binary (modernc SQLite needs no cgo) on an empty base,
# run as the unprivileged user 65532, keeping its SQLite database in the /data volume.
#
#   docker build -t mgmtapi .
#   docker run -d --name mgmtapi -p 8080:8080 -v mgmtapi-data:/data mgmtapi
#   docker logs mgmtapi    # the first start prints the generated all-permission key once
#
# The image has no shell and no curl: its HEALTHCHECK is the binary's own `mgmtapi healthcheck`.
# See docs/operations.md ("Container").

# The builder is pinned to the Go release go.mod requires.
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download && go mod verify
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o /rootfs/mgmtapi ./cmd/mgmtapi \
 && sh deploy/container/rootfs.sh /rootfs

FROM scratch
COPY --from=build /rootfs/ /
USER 65532:65532
ENV MGMTAPI_ADDR=:8080 \
    MGMTAPI_DATA_DIR=/data
EXPOSE 8080
VOLUME ["/data"]
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 CMD ["/mgmtapi", "healthcheck"]
LABEL org.opencontainers.image.title="mgmtapi" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/mgmtapi/mgmtapi"
ENTRYPOINT ["/mgmtapi"]
CMD ["serve"]
