# rankwire gateway image from a release's binaries: scripts/release.sh copies
# this file into dist/VERSION/container/ beside gateway_linux_amd64,
# gateway_linux_arm64 and an empty data/. Build and push both architectures:
#
#   docker buildx build --platform linux/amd64,linux/arm64 \
#     -t ghcr.io/rankwire/rankwire:VERSION --push dist/VERSION/container
#
# The same image as the root Dockerfile's, without compiling: a static binary
# on distroless, user 65532, data on the volume /data.
FROM gcr.io/distroless/static-debian12:nonroot
ARG TARGETARCH
COPY gateway_linux_${TARGETARCH} /gateway
# /data exists, owned by 65532, before VOLUME declares it: Docker fills a
# fresh named volume from it, owner included, so the gateway can write there.
COPY --chown=65532:65532 data /data
USER 65532:65532
VOLUME ["/data"]
EXPOSE 8080 9464
ENTRYPOINT ["/gateway", "--addr", "0.0.0.0:8080", "--data", "/data", "--metrics-addr", "0.0.0.0:9464", "--log-format", "json"]
