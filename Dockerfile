# syntax=docker/dockerfile:1
# mcp-verdict in a small image: a Rust builder stage, then a distroless runtime (glibc, CA
# certificates for https:// servers, no shell, a non-root user). docs/building.md has the usage;
# tests/shipping.rs checks that every file this copies exists.
#
#   docker build -t mcp-verdict .
#   docker run --rm -v "$PWD:/work" mcp-verdict replay captures/
#   docker run --rm --network host mcp-verdict probe http://127.0.0.1:8000/mcp

# --- build: the release binary, dependencies as Cargo.lock pins them ---
FROM rust:1-slim-bookworm AS build
WORKDIR /src
# Cargo reads every target the manifest names (benches and examples included), so they come
# along; tests, testdata, docs and the fuzz crate do not (.dockerignore).
COPY Cargo.toml Cargo.lock README.md ./
COPY src ./src
COPY benches ./benches
COPY examples ./examples
RUN cargo build --release --locked --bin mcp-verdict \
 && cp target/release/mcp-verdict /usr/local/bin/mcp-verdict \
 && /usr/local/bin/mcp-verdict --version

# --- runtime ---
FROM gcr.io/distroless/cc-debian12:nonroot AS runtime
COPY --from=build /usr/local/bin/mcp-verdict /usr/local/bin/mcp-verdict
WORKDIR /work
ENTRYPOINT ["/usr/local/bin/mcp-verdict"]
CMD ["--help"]
