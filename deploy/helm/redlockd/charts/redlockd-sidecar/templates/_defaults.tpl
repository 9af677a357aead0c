{{/*
The sidecar's settings and their defaults: what an app's chart leaves out of
the dict it passes (see _sidecar.tpl) is taken from here. They are those of
deploy/app-with-sidecar.yaml.
*/}}
{{- define "redlockd-sidecar.defaults" -}}
image: registry.example.com/redlockd:0.1.0
imagePullPolicy: ""
# The ConfigMap holding redlockd.toml (written from `config` below).
configMap: redlockd
redis:
  # A Secret with the `redlockd` ACL user's password under `password`: the
  # same value as the masters' (Secrets are per namespace).
  secret: redlockd-redis
  # Only for redlockd-sidecar.redisSecret; empty: kept from the Secret
  # already there, else generated. URL-safe (it goes into redis:// URLs).
  password: ""
  user: redlockd
  # The positions in index order (never reorder them on a running cluster):
  # redis://, rediss://, redis-cluster:// or rediss-cluster:// URLs, where
  # $(REDIS_PASSWORD) stands for the Secret's password; a cluster's further
  # seeds follow its URL after commas. Empty: the redlockd chart's masters,
  # as named below.
  nodes: []
  masters:
    name: redis
    namespace: redlock
    replicas: 5
    port: 6379
    clusterDomain: cluster.local
  # A Secret with `ca.crt`, the CA trusted for rediss:// positions.
  tlsCASecret: ""
# All interfaces: the kubelet probes the pod IP; a NetworkPolicy keeps
# other pods off 7420 (deploy/README.md#the-probes).
listen: "0.0.0.0:7420"
metricsListen: "0.0.0.0:9420"
# redlockd.toml, section by section (docs/configuration.md#settings).
# redis.nodes and the listen addresses come from the environment.
config:
  server:
    shutdown_grace: 5s
    keepalive: 5s
  log:
    format: json
    filter: info
  redis:
    # Must match the masters' ACL (~redlockd:* &redlockd:*).
    key_prefix: redlockd
    node_timeout: 50ms
    connect_timeout: 2s
    command_timeout: 1s
  lock:
    default_ttl: 10s
    min_ttl: 250ms
    # Also a restarted master's quarantine: the masters' readiness gate
    # (70 s) must stay above it.
    max_ttl: 60s
    max_wait: 60s
    max_hold: 1h
    max_waiters_per_resource: 100
    max_waiters: 1000
    max_sessions: 1000
  safety:
    quarantine: true
    check_interval: 1s
    clock_jump_bound: 500ms
# OpenTelemetry traces over OTLP/gRPC (docs/tracing.md): http://host:4317
# or https://...; empty: none.
otlp:
  endpoint: ""
  sampleRatio: ""
# TLS on the gRPC port (docs/security.md#tls-and-mutual-tls): a Secret of
# type kubernetes.io/tls; clientCA: true also requires client certificates
# signed by its `ca.crt` (mutual TLS). With TLS the probes are tcpSocket
# (the kubelet's gRPC probes speak no TLS).
tls:
  secret: ""
  clientCA: false
# Tenants (docs/security.md#tenants-and-bearer-tokens): a Secret holding the
# tenants file under `tokensKey`, and the variables its token_env entries
# read, each {name, secret, key}.
auth:
  tokensSecret: ""
  tokensKey: tokens.toml
  tokenEnv: []
# false: the pod stays ready without a Redis quorum (alert on
# redlock_node_state instead).
readinessProbe: true
# docs/operations.md#sizing: 100m carries about 300 acquire + release
# cycles a second; keep a CPU limit at 200m or more.
resources:
  requests:
    cpu: 100m
    memory: 64Mi
  limits:
    cpu: 500m
    memory: 256Mi
# More environment variables for the daemon, as in a container spec.
env: []
{{- end }}

{{/* .d (defaults) with .u (given) over it, key by key; a given false or
empty value wins too (unlike mergeOverwrite). Returns YAML. */}}
{{- define "redlockd-sidecar.merge" -}}
{{- $d := .d | default dict }}
{{- $u := .u | default dict }}
{{- $out := dict }}
{{- range $k := concat (keys $d) (keys $u) | uniq }}
{{- if and (hasKey $u $k) (kindIs "map" (get $u $k)) (kindIs "map" (get $d $k)) }}
{{- $_ := set $out $k (include "redlockd-sidecar.merge" (dict "d" (get $d $k) "u" (get $u $k)) | fromYaml) }}
{{- else if hasKey $u $k }}
{{- $_ := set $out $k (get $u $k) }}
{{- else }}
{{- $_ := set $out $k (get $d $k) }}
{{- end }}
{{- end }}
{{- toYaml $out }}
{{- end }}

{{/* The settings in force: the given ones (.Values) over the defaults. */}}
{{- define "redlockd-sidecar.values" -}}
{{- include "redlockd-sidecar.merge" (dict "d" (include "redlockd-sidecar.defaults" . | fromYaml) "u" .Values) }}
{{- end }}
