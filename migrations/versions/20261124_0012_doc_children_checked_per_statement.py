"""``doc``'s children checked once per statement instead of by foreign keys row by row.

``doc_text``, ``doc_class`` and ``doc_fetch`` referenced ``doc(oid)`` with foreign
keys. A key is checked for every new row by a query each session plans once and keeps
until the table is next analysed, and a crawl starts on a ``doc`` of a page or two
(the ``baselines`` branch rewrites it with only its seeds in it, leaving statistics of
one page): the check was planned as a sequential scan and, kept, read all of ``doc``
for every page stored until autovacuum analysed it again, up to 336 pages a check ten
seconds into a breadth-first crawl (``auto_explain``; PostgreSQL 15). As migration 0009
did for ``doc.sid``, triggers now keep the keys' rules:

- ``doc_children_exist``: after each statement that inserts into one of the three, every
  new row's ``oid`` must be a ``doc`` row, looked up by key (the function's planner
  settings keep it an index lookup however small ``doc`` looks);
- ``child_oid_kept``: ``UPDATE ... SET oid`` on them is refused (``doc.oid`` cannot
  change either: it is the hash of the URL, migration 0011);
- ``doc_children_deleted``: after each ``DELETE FROM doc``, the deleted documents' text,
  scores, fetch results and leases are deleted with them (the keys' ``ON DELETE
  CASCADE``).

What the keys did and these do not: lock the ``doc`` row while a child row is written
(every writer holds that row locked already: a crawler's store and a classifier write
only the pages they claimed), and refuse ``TRUNCATE doc`` unless its children are
truncated with it (truncate them together).

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-24
"""

from __future__ import annotations

from alembic import op

revision = "0012"
down_revision = "0011"
branch_labels = None
depends_on = None

CHILDREN = ("doc_text", "doc_class", "doc_fetch")


def upgrade() -> None:
    for table in CHILDREN:
        op.execute(f"ALTER TABLE {table} DROP CONSTRAINT {table}_oid_fkey")
    op.execute(
        """
        CREATE FUNCTION doc_children_exist() RETURNS trigger LANGUAGE plpgsql
        SET enable_seqscan = off
        AS $$
        DECLARE
            missing bigint;
        BEGIN
            -- one lookup by key a new row: the subquery is correlated, so no join
            -- method applies, and with enable_seqscan off it is an index scan
            SELECT n.oid INTO missing FROM new_rows AS n
            WHERE (SELECT d.oid FROM doc AS d WHERE d.oid = n.oid) IS NULL
            LIMIT 1;
            IF FOUND THEN
                RAISE EXCEPTION '% rows name doc % that does not exist', TG_TABLE_NAME, missing
                    USING ERRCODE = 'foreign_key_violation',
                          HINT = 'a document''s text, scores and fetch results follow its doc row';
            END IF;
            RETURN NULL;
        END
        $$
        """
    )
    op.execute(
        """
        CREATE FUNCTION refuse_oid_change() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            RAISE EXCEPTION '%.oid does not change: it names a doc row', TG_TABLE_NAME
                USING ERRCODE = 'foreign_key_violation';
        END
        $$
        """
    )
    for table in CHILDREN:
        op.execute(
            f"CREATE TRIGGER {table}_docs_exist AFTER INSERT ON {table} "
            "REFERENCING NEW TABLE AS new_rows "
            "FOR EACH STATEMENT EXECUTE FUNCTION doc_children_exist()"
        )
        op.execute(
            f"CREATE TRIGGER {table}_oid_kept BEFORE UPDATE OF oid ON {table} "
            "FOR EACH STATEMENT EXECUTE FUNCTION refuse_oid_change()"
        )
    op.execute(
        """
        CREATE FUNCTION doc_children_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            DELETE FROM doc_text WHERE oid IN (SELECT oid FROM gone_docs);
            DELETE FROM doc_class WHERE oid IN (SELECT oid FROM gone_docs);
            DELETE FROM doc_fetch WHERE oid IN (SELECT oid FROM gone_docs);
            DELETE FROM doc_lease WHERE oid IN (SELECT oid FROM gone_docs);
            RETURN NULL;
        END
        $$
        """
    )
    op.execute(
        """
        CREATE TRIGGER doc_children_deleted AFTER DELETE ON doc
        REFERENCING OLD TABLE AS gone_docs
        FOR EACH STATEMENT EXECUTE FUNCTION doc_children_deleted()
        """
    )


def downgrade() -> None:
    op.execute("DROP TRIGGER doc_children_deleted ON doc")
    op.execute("DROP FUNCTION doc_children_deleted()")
    for table in CHILDREN:
        op.execute(f"DROP TRIGGER {table}_oid_kept ON {table}")
        op.execute(f"DROP TRIGGER {table}_docs_exist ON {table}")
    op.execute("DROP FUNCTION refuse_oid_change()")
    op.execute("DROP FUNCTION doc_children_exist()")
    for table in CHILDREN:
        op.execute(
            f"ALTER TABLE {table} ADD CONSTRAINT {table}_oid_fkey FOREIGN KEY (oid) "
            "REFERENCES doc (oid) ON DELETE CASCADE"
        )
