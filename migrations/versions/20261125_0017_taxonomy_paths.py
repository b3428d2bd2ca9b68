"""``taxonomy_paths()``: every category's dotted name, one definition for every report.

The census and the export named categories by a recursive CTE over ``taxonomy`` in the
same statement as ``doc``. Citus refuses a recursive CTE in a statement over
distributed tables (issue 26), and runs a PL/pgSQL table function on the coordinator
as an intermediate result; on one server it is the same CTE, behind a call.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-25
"""

from __future__ import annotations

from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.execute(
        """
        CREATE FUNCTION taxonomy_paths() RETURNS TABLE (kcid smallint, name text)
        LANGUAGE plpgsql STABLE AS $$
        BEGIN
            RETURN QUERY
            WITH RECURSIVE path AS (
                SELECT t.kcid, t.kcname::text AS name FROM taxonomy AS t WHERE t.kcid = 0
                UNION ALL
                SELECT t.kcid, path.name || '.' || t.kcname
                FROM taxonomy AS t JOIN path ON t.pcid = path.kcid WHERE t.kcid <> 0
            )
            SELECT path.kcid, path.name FROM path;
        END
        $$;
        COMMENT ON FUNCTION taxonomy_paths() IS
            'Each category''s dotted name from the root, e.g. Top.Science.Biology';
        """
    )


def downgrade() -> None:
    op.execute("DROP FUNCTION taxonomy_paths()")
