"""``doc.sid`` checked once per statement instead of by a foreign key row by row.

The foreign key ``doc_sid_fkey`` checked each new URL on its own: a lookup of its site
that also locks the site row (``FOR KEY SHARE``). Checking in the out-links of a batch
of pages inserts thousands of URLs of a few hundred sites, and two crawler processes
lock the same site rows, which PostgreSQL records as multixacts. That check was 30%
of the time of ``store_link_docs``. In ``bench/ingest.py``, alternating runs, two
stores: 94,400-94,600 link rows/s with the key, 106,200-107,100 with the triggers
below (one store: 57,100-57,400 and 64,000-66,300); with no check at all a trial
gave 106,100-108,900 against 89,700-93,300 with the key.

The same rules, as triggers:

- ``doc_sites_exist``: after each statement that inserts into ``doc``, every new row's
  ``sid`` must be a site (one anti-join of the inserted rows with ``site``);
- ``doc_sid_kept``: ``UPDATE doc SET sid = ...`` is refused (no code moves a URL to
  another site: the site is its host);
- ``site_sid_kept``: ``UPDATE site SET sid = ...`` is refused (an identity);
- ``site_still_referenced``: after each ``DELETE FROM site``, no ``doc`` row may still
  name a deleted site (like the key's check, a scan of ``doc``; sites are not deleted
  in a crawl).

What the key did and these do not: lock the site row, so a site deleted while a
crawler stores URLs of it at that moment can leave them pointing nowhere; and refuse
``TRUNCATE site`` while ``doc`` has rows.

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23
"""

from __future__ import annotations

from alembic import op

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.drop_constraint("doc_sid_fkey", "doc", type_="foreignkey")
    op.execute(
        """
        CREATE FUNCTION doc_sites_exist() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            missing integer;
        BEGIN
            SELECT n.sid INTO missing FROM new_docs AS n
            WHERE NOT EXISTS (SELECT FROM site AS s WHERE s.sid = n.sid)
            LIMIT 1;
            IF FOUND THEN
                RAISE EXCEPTION 'doc rows name site % that does not exist', missing
                    USING ERRCODE = 'foreign_key_violation',
                          HINT = 'insert the site first: a URL belongs to the site of its host';
            END IF;
            RETURN NULL;
        END
        $$
        """
    )
    op.execute(
        """
        CREATE TRIGGER doc_sites_exist AFTER INSERT ON doc
        REFERENCING NEW TABLE AS new_docs
        FOR EACH STATEMENT EXECUTE FUNCTION doc_sites_exist()
        """
    )
    op.execute(
        """
        CREATE FUNCTION refuse_sid_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION '%.sid does not change: a URL belongs to the site of its host',
                TG_TABLE_NAME USING ERRCODE = 'foreign_key_violation';
        END
        $$
        """
    )
    op.execute(
        "CREATE TRIGGER doc_sid_kept BEFORE UPDATE OF sid ON doc "
        "FOR EACH STATEMENT EXECUTE FUNCTION refuse_sid_change()"
    )
    op.execute(
        "CREATE TRIGGER site_sid_kept BEFORE UPDATE OF sid ON site "
        "FOR EACH STATEMENT EXECUTE FUNCTION refuse_sid_change()"
    )
    op.execute(
        """
        CREATE FUNCTION site_still_referenced() RETURNS trigger LANGUAGE plpgsql AS $$
        DECLARE
            kept integer;
        BEGIN
            SELECT d.sid INTO kept FROM doc AS d
            WHERE d.sid IN (SELECT sid FROM gone_sites)
            LIMIT 1;
            IF FOUND THEN
                RAISE EXCEPTION 'site % still has doc rows', kept
                    USING ERRCODE = 'foreign_key_violation',
                          HINT = 'delete the site''s doc rows first';
            END IF;
            RETURN NULL;
        END
        $$
        """
    )
    op.execute(
        """
        CREATE TRIGGER site_still_referenced AFTER DELETE ON site
        REFERENCING OLD TABLE AS gone_sites
        FOR EACH STATEMENT EXECUTE FUNCTION site_still_referenced()
        """
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER site_still_referenced ON site")
    op.execute("DROP FUNCTION site_still_referenced()")
    op.execute("DROP TRIGGER site_sid_kept ON site")
    op.execute("DROP TRIGGER doc_sid_kept ON doc")
    op.execute("DROP FUNCTION refuse_sid_change()")
    op.execute("DROP TRIGGER doc_sites_exist ON doc")
    op.execute("DROP FUNCTION doc_sites_exist()")
    op.create_foreign_key("doc_sid_fkey", "doc", "site", ["sid"], ["sid"])
