"""A small Flask-Admin app for ``steadyhand bench drift --app flask-admin``: one model (Item) with CRUD.

Runs in the release's own virtual environment (``python flask_admin_app.py``; settings in serve_common).
Flask-Admin 1.x takes ``template_mode`` (``DRIFT_TEMPLATE_MODE``: bootstrap3 or bootstrap4); 2.x has
only Bootstrap 4 (``Bootstrap4Theme``).  No sign-in: Flask-Admin has none of its own.
"""
from __future__ import annotations

from flask import Flask, redirect
from flask_admin import Admin
from flask_admin.contrib.sqla import ModelView
from flask_sqlalchemy import SQLAlchemy

from serve_common import serve, setting

db = SQLAlchemy()


class Item(db.Model):
    __tablename__ = "item"
    id = db.Column(db.Integer, primary_key=True)
    name = db.Column(db.String(80), nullable=False)
    quantity = db.Column(db.Integer)


class ItemView(ModelView):
    column_list = ["name", "quantity"]
    form_columns = ["name", "quantity"]


def make_app() -> Flask:
    app = Flask(__name__)
    app.config.update(SQLALCHEMY_DATABASE_URI="sqlite:///" + setting("DRIFT_DB"),
                      SQLALCHEMY_TRACK_MODIFICATIONS=False,
                      SECRET_KEY=setting("DRIFT_SECRET_KEY", "drift-bench-local-only"))
    db.init_app(app)
    mode = setting("DRIFT_TEMPLATE_MODE", "bootstrap4")
    try:
        from flask_admin.theme import Bootstrap4Theme  # Flask-Admin 2.x
        admin = Admin(app, name="Drift Inventory", theme=Bootstrap4Theme())
    except ImportError:  # Flask-Admin 1.x
        admin = Admin(app, name="Drift Inventory", template_mode=mode)
    admin.add_view(ItemView(Item, db.session, name="Items"))

    @app.route("/")
    def index():
        return redirect("admin/")

    with app.app_context():
        db.create_all()
    return app


if __name__ == "__main__":
    serve(make_app(), setting("DRIFT_PREFIX", ""))
