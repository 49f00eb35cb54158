{{/*
The chart name.
*/}}
{{- define "narad.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
The fully qualified app name. Cut at 52 characters, not 63: StatefulSet pods
carry a controller-revision-hash label of the name plus 11 characters, and
the headless Service adds "-headless", both within Kubernetes' 63.
*/}}
{{- define "narad.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
Chart name and version, for the chart label.
*/}}
{{- define "narad.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Common labels.
*/}}
{{- define "narad.labels" -}}
helm.sh/chart: {{ include "narad.chart" . }}
{{ include "narad.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Selector labels.
*/}}
{{- define "narad.selectorLabels" -}}
app.kubernetes.io/name: {{ include "narad.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
The headless Service that gives every node a stable DNS name.
*/}}
{{- define "narad.headlessName" -}}
{{- printf "%s-headless" (include "narad.fullname" .) }}
{{- end }}

{{/*
The Secret holding cluster-secret and admin-password.
*/}}
{{- define "narad.secretName" -}}
{{- .Values.auth.existingSecret | default (include "narad.fullname" .) }}
{{- end }}

{{/*
The image reference; the tag defaults to the chart's appVersion, and a
digest, when set, pins the image whatever the tag now points at.
*/}}
{{- define "narad.image" -}}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion | toString) }}
{{- with .Values.image.digest }}@{{ . }}{{ end }}
{{- end }}

{{/*
Fixed ports: the image and the binary use them, and node RPC is always the
cluster port + 1.
*/}}
{{- define "narad.httpPort" -}}7942{{- end }}
{{- define "narad.clusterPort" -}}7943{{- end }}
{{- define "narad.rpcPort" -}}7944{{- end }}

{{/*
The client API's scheme: https when tls.apiSecret names its certificate.
*/}}
{{- define "narad.scheme" -}}
{{- if .Values.tls.apiSecret }}https{{ else }}http{{ end }}
{{- end }}

{{/*
The client API's URL inside the cluster, through the client Service: the
name its certificate must be valid for when tls.apiSecret is set.
*/}}
{{- define "narad.apiURL" -}}
{{- printf "%s://%s.%s.svc:%v" (include "narad.scheme" .) (include "narad.fullname" .) .Release.Namespace .Values.service.port }}
{{- end }}

{{/*
The DNS suffix of every node: <pod>.<this>.
*/}}
{{- define "narad.podDomain" -}}
{{- printf "%s.%s.svc.%s" (include "narad.headlessName" .) .Release.Namespace .Values.clusterDomain }}
{{- end }}

{{/*
How many replicas are the cluster's initial members: cluster.bootstrapReplicas
when set, else the count pinned on the existing StatefulSet by the first
install (upgrades), else replicas (first install, or no cluster access);
never more than replicas. After a scale-down below it every remaining node
already holds the cluster's state (the list is consulted only on an empty
data directory), and the pin must come down with it: kept at the old count,
a later scale-up would list the new, empty nodes as initial members, and
they would bootstrap on their own instead of joining.
*/}}
{{- define "narad.bootstrapReplicas" -}}
{{- $n := int .Values.replicas }}
{{- if .Values.cluster.bootstrapReplicas }}
{{- $n = int .Values.cluster.bootstrapReplicas }}
{{- else }}
{{- $sts := lookup "apps/v1" "StatefulSet" .Release.Namespace (include "narad.fullname" .) | default dict }}
{{- $pinned := dig "metadata" "annotations" "narad.io/bootstrap-replicas" "" $sts }}
{{- if $pinned }}
{{- $n = int $pinned }}
{{- end }}
{{- end }}
{{- /* After a scale-down the pin follows the replicas down (see above). */}}
{{- $n = min $n (int .Values.replicas) }}
{{- $n }}
{{- end }}

{{/*
NARAD_CLUSTER_PEERS: id@host:port for every current replica, this node
included.
*/}}
{{- define "narad.peers" -}}
{{- $full := include "narad.fullname" . }}
{{- $domain := include "narad.podDomain" . }}
{{- $port := include "narad.clusterPort" . }}
{{- $peers := list }}
{{- range $i := until (int .Values.replicas) }}
{{- $peers = append $peers (printf "%s-%d@%s-%d.%s:%s" $full $i $full $i $domain $port) }}
{{- end }}
{{- join "," $peers }}
{{- end }}

{{/*
NARAD_CLUSTER_INITIAL_MEMBERS: the ids of the first bootstrapReplicas nodes.
*/}}
{{- define "narad.initialMembers" -}}
{{- $full := include "narad.fullname" . }}
{{- $ids := list }}
{{- range $i := until (int (include "narad.bootstrapReplicas" .)) }}
{{- $ids = append $ids (printf "%s-%d" $full $i) }}
{{- end }}
{{- join "," $ids }}
{{- end }}

{{/*
Refuse values that would render a broken cluster.
*/}}
{{- define "narad.validate" -}}
{{- $replicas := int .Values.replicas }}
{{- if lt $replicas 1 }}
{{- fail "replicas must be at least 1" }}
{{- end }}
{{- $boot := int (include "narad.bootstrapReplicas" .) }}
{{- if lt $boot 1 }}
{{- fail (printf "cluster.bootstrapReplicas (%d) must be at least 1" $boot) }}
{{- end }}
{{- if not (has .Values.podAntiAffinityPreset (list "" "soft" "hard")) }}
{{- fail "podAntiAffinityPreset must be \"soft\", \"hard\" or \"\"" }}
{{- end }}
{{- end }}
