pub mod pi; pub mod ui_message;
