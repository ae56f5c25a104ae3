"""Kibana and OpenSearch Dashboards saved objects shipped with simdup-es (read by simdup_es.dashboards)."""
