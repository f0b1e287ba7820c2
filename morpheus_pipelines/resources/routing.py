"""Routing configuration as a Dagster resource: the APAC Sales list and the forced ids."""

import dagster as dg
from pydantic import Field


class TenantRoutingResource(dg.ConfigurableResource):
    """`APAC_SALES_EMAILS` (comma-separated, exact match after trim and lower-case; empty
    means no Sales-owned routing) and `FORCED_SALES_OWNED_TENANT_IDS` (the allowlisted fast
    path to Sales-owned P0)."""

    apac_sales_emails: str = Field(default="", repr=False)
    forced_sales_owned_tenant_ids: str = ""

    @property
    def sales_emails(self) -> frozenset[str]:
        # The routing rules bring pandas: imported by the run, not by the code location.
        from morpheus_pipelines.tenants.rules.routing import parse_email_list

        return parse_email_list(self.apac_sales_emails)

    @property
    def forced_ids(self) -> frozenset[str]:
        from morpheus_pipelines.tenants.rules.routing import parse_id_list

        return parse_id_list(self.forced_sales_owned_tenant_ids)
