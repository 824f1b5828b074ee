# rankwire gateway: a static binary on a distroless base, running as a
# non-root user, its data on a volume. Build and run:
#
#   docker build --build-arg VERSION=$(git describe --tags --always) -t rankwire .
#   docker run -p 8080:8080 -p 9464:9464 -v rankwire-data:/data \
#     -v $PWD/keys.json:/etc/rankwire/keys.json:ro rankwire --keys /etc/rankwire/keys.json
#
# Without --keys the gateway runs the demo (a generated tenant, tokens on
# stdout). See docs/DEPLOY.md.
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/gateway ./cmd/gateway
# The data directory, owned by the user the gateway runs as. distroless has
# no shell to create it, so it is made here and copied with its owner: Docker
# fills a fresh named volume from the image's /data, owner included, so the
# gateway can write its lock file there. Without it the volume is root's and
# the gateway exits at start ("--data /data: lock file: permission denied").
RUN mkdir -p /out/data && chown 65532:65532 /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/gateway /gateway
# 65532 is distroless's nonroot user; /data must exist, owned by it, before
# VOLUME declares it (a bind mount is not filled: chown it on the host).
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
VOLUME ["/data"]
EXPOSE 8080 9464
ENTRYPOINT ["/gateway", "--addr", "0.0.0.0:8080", "--data", "/data", "--metrics-addr", "0.0.0.0:9464", "--log-format", "json"]
