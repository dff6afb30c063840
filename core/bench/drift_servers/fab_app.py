"""A small Flask-AppBuilder app for ``steadyhand bench drift --app fab``: one model (Item) with CRUD.

Runs in the release's own virtual environment (``python fab_app.py``; settings in serve_common).  It
creates the SQLite file's tables and an Admin user ``admin`` whose password is ``DRIFT_ADMIN_PASSWORD``
(database authentication), then serves the app.  The list, add, edit and delete views are
Flask-AppBuilder's own (``ModelView`` over ``SQLAInterface``), only the columns are chosen here.
"""
from __future__ import annotations

from flask import Flask
from flask_appbuilder import AppBuilder, Model, ModelView, SQLA
from flask_appbuilder.const import AUTH_DB
from flask_appbuilder.models.sqla.interface import SQLAInterface
from sqlalchemy import Column, Integer, String

from serve_common import serve, setting


class Item(Model):
    __tablename__ = "item"
    id = Column(Integer, primary_key=True)
    name = Column(String(80), nullable=False)
    quantity = Column(Integer)


class ItemView(ModelView):
    datamodel = SQLAInterface(Item)
    list_columns = ["name", "quantity"]
    add_columns = ["name", "quantity"]
    edit_columns = ["name", "quantity"]
    show_columns = ["name", "quantity"]


def make_app() -> Flask:
    app = Flask(__name__)
    app.config.update(
        SQLALCHEMY_DATABASE_URI="sqlite:///" + setting("DRIFT_DB"), SQLALCHEMY_TRACK_MODIFICATIONS=False,
        SECRET_KEY=setting("DRIFT_SECRET_KEY", "drift-bench-local-only"), CSRF_ENABLED=True, AUTH_TYPE=AUTH_DB,
        APP_NAME="Drift Inventory", FAB_ADD_SECURITY_API=False,
    )
    with app.app_context():
        db = SQLA(app)
        appbuilder = AppBuilder(app, db.session)
        appbuilder.add_view(ItemView, "Items", icon="fa-list")
        db.create_all()
        sm = appbuilder.sm
        if sm.find_user(username="admin") is None:
            sm.add_user("admin", "Ada", "Admin", "admin@example.org", sm.find_role(sm.auth_role_admin),
                        setting("DRIFT_ADMIN_PASSWORD"))
    return app


if __name__ == "__main__":
    serve(make_app(), setting("DRIFT_PREFIX", ""))
