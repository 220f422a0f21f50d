/**
 * @module Passkeys on /login and /account (served as /assets/passkeys.js, after webauthn.js, the
 * browser build of @simplewebauthn/browser; plain JavaScript, no build step).
 *
 * /login: the "Sign in with a passkey" button, and the browser's autofill (conditional UI): the
 * email field is `autocomplete="username webauthn"`, and a conditional request waits in the
 * background where the browser supports it, so a passkey shows among the saved sign-ins.
 * /account: the Passkeys section: list, add (the current password when the account has one),
 * rename, remove. Everything it shows is set as text.
 */
'use strict';

(function () {
  var page = document.body.getAttribute('data-page');
  var messageBox = document.getElementById('message');
  var lib = window.SimpleWebAuthnBrowser;
  var supported = !!(lib && lib.browserSupportsWebAuthn());

  function showMessage(kind, text) {
    if (!messageBox) return;
    messageBox.classList.remove('message--error', 'message--success');
    messageBox.classList.add(kind === 'error' ? 'message--error' : 'message--success');
    messageBox.textContent = '';
    window.setTimeout(function () {
      messageBox.textContent = text;
    }, 30);
  }

  function call(method, url, data) {
    var init = { method: method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
    if (data !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(data);
    }
    return fetch(url, init).then(function (response) {
      return response
        .json()
        .catch(function () {
          return null;
        })
        .then(function (body) {
          return { response: response, body: body, code: body && typeof body.error === 'string' ? body.error : '' };
        });
    });
  }

  /** Words for a refused call. */
  function describeFailure(result) {
    var code = result.code;
    if (code === 'passkey_invalid') return msg('script.passkey.error.invalid');
    if (code === 'passkey_challenge_invalid') return msg('script.passkey.error.challenge');
    if (code === 'rate_limited') return msg('script.passkey.error.rateLimited');
    if (code === 'invalid_credentials') return msg('script.account.error.wrongPassword');
    if (code === 'reauthentication_required') {
      return document.getElementById('passkey-current') ? msg('script.passkey.error.passwordToAdd') : msg('script.account.error.signInAgain');
    }
    if (code === 'account_locked') return msg('script.account.error.locked');
    if (code === 'last_sign_in_method') return msg('script.passkey.error.lastMethod');
    if (code === 'validation_error') {
      var issues = (result.body && result.body.issues) || [];
      var aboutName = issues.some(function (issue) {
        return String(issue.path).split('.')[0] === 'name';
      });
      return aboutName ? msg('script.passkey.error.name') : msg('script.passkey.error.unreadable');
    }
    if (result.response.status >= 500) return msg('script.error.server');
    return (result.body && serverText(result.body.message, code)) || msg('script.error.generic');
  }

  /** Words for the browser's own refusal; null when the person simply cancelled. */
  function describeBrowserError(error) {
    var name = error && error.name;
    if (name === 'AbortError') return null;
    if (name === 'NotAllowedError') return msg('script.passkey.error.cancelled');
    if (name === 'InvalidStateError') return msg('script.passkey.error.exists');
    if (name === 'SecurityError') return msg('script.passkey.error.insecure');
    return msg('script.passkey.error.browser');
  }

  // --- Messages: the page's catalog texts, read once by app.js (which runs first) ---
  var messages = window.gatehouseMessages;
  var lang = messages.lang;
  var msg = messages.msg;
  var serverText = messages.serverText;

  function setBusy(button, busy) {
    if (!button) return;
    if (busy) {
      button.setAttribute('data-idle-text', button.textContent);
      button.textContent = button.getAttribute('data-busy-text') || button.textContent;
    } else {
      button.textContent = button.getAttribute('data-idle-text') || button.textContent;
    }
    button.disabled = busy;
  }

  // --- /login ---
  function setUpLogin() {
    var box = document.getElementById('passkey-login');
    var button = document.getElementById('passkey-button');
    if (!supported || !box || !button) return;
    box.hidden = false;
    var returnTo = button.getAttribute('data-return-to') || '/dashboard';

    /** Options, the browser's ceremony, the verification; `autofill`: the conditional request behind the email field. */
    function signIn(autofill) {
      return call('POST', '/api/auth/passkeys/login/options').then(function (options) {
        if (!options.response.ok) {
          // The background request stays quiet; only a sign-in the person asked for says why.
          if (!autofill) showMessage('error', describeFailure(options));
          return;
        }
        return lib.startAuthentication({ optionsJSON: options.body, useBrowserAutofill: autofill }).then(
          function (credential) {
            // From here on the person chose a passkey (from the button or the autofill list): say what happened.
            return call('POST', '/api/auth/passkeys/login/verify', { response: credential }).then(function (result) {
              // A passkey without user verification is one factor: a 2FA account then owes its code.
              if (result.response.ok && result.body && result.body.mfaRequired) {
                return window.location.assign('/login?mfa=required&return_to=' + encodeURIComponent(returnTo));
              }
              if (result.response.ok) return window.location.assign(returnTo);
              showMessage('error', describeFailure(result));
            });
          },
          function (error) {
            var text = describeBrowserError(error);
            if (text !== null && !autofill) showMessage('error', text);
          },
        );
      });
    }

    button.addEventListener('click', function () {
      if (button.disabled) return;
      setBusy(button, true);
      signIn(false)
        .catch(function () {
          showMessage('error', msg('script.error.network'));
        })
        .finally(function () {
          setBusy(button, false);
        });
    });

    lib.browserSupportsWebAuthnAutofill().then(function (autofill) {
      if (autofill) signIn(true).catch(function () {});
    });
  }

  // --- /account ---
  function setUpAccount() {
    var list = document.getElementById('passkey-list');
    var form = document.getElementById('passkey-add-form');
    if (!list || !form) return;

    function formatTime(iso) {
      var date = new Date(iso);
      // In the page's language (<html lang>), in the reader's own time zone.
      return isNaN(date.getTime()) ? iso : new Intl.DateTimeFormat(lang, { dateStyle: 'medium', timeStyle: 'short' }).format(date);
    }

    function button(label, onClick) {
      var each = document.createElement('button');
      each.type = 'button';
      each.className = 'secondary';
      each.textContent = label;
      each.addEventListener('click', function () {
        each.disabled = true;
        Promise.resolve(onClick()).finally(function () {
          each.disabled = false;
        });
      });
      return each;
    }

    /** Renaming and removing re-authenticate: the password field beside the list, when the account has a password. */
    function reauthentication() {
      var field = document.getElementById('passkey-manage-current');
      return field && field.value !== '' ? { currentPassword: field.value } : {};
    }

    /** As describeFailure, naming the field beside the list when the password is what is missing. */
    function describeManageFailure(result) {
      if (result.code === 'reauthentication_required' && document.getElementById('passkey-manage-current')) {
        return msg('script.passkey.error.passwordToManage');
      }
      return describeFailure(result);
    }

    function renameForm(passkey, li) {
      var edit = document.createElement('form');
      edit.className = 'rename-form';
      edit.noValidate = true;
      var id = 'passkey-rename-' + passkey.id;
      var label = document.createElement('label');
      label.htmlFor = id;
      label.textContent = msg('script.passkey.newName');
      var input = document.createElement('input');
      input.id = id;
      input.name = 'name';
      input.type = 'text';
      input.maxLength = 64;
      input.autocomplete = 'off';
      input.value = passkey.name;
      var save = document.createElement('button');
      save.type = 'submit';
      save.className = 'secondary';
      save.textContent = msg('script.passkey.save');
      edit.appendChild(label);
      edit.appendChild(input);
      edit.appendChild(save);
      edit.addEventListener('submit', function (event) {
        event.preventDefault();
        save.disabled = true;
        call('PATCH', '/api/auth/passkeys/' + encodeURIComponent(passkey.id), Object.assign({ name: input.value }, reauthentication()))
          .then(function (result) {
            if (!result.response.ok) return showMessage('error', describeManageFailure(result));
            showMessage('success', msg('script.passkey.renamed', { name: result.body.passkey.name }));
            return load();
          }, networkFailure)
          .finally(function () {
            save.disabled = false;
          });
      });
      li.appendChild(edit);
      input.focus();
    }

    function networkFailure() {
      showMessage('error', msg('script.error.network'));
    }

    function load() {
      return call('GET', '/api/auth/passkeys').then(function (result) {
        if (!result.response.ok) {
          if (result.code !== 'not_authenticated') showMessage('error', describeFailure(result));
          return;
        }
        list.textContent = '';
        if (result.body.passkeys.length === 0) {
          var none = document.createElement('li');
          none.textContent = msg('script.passkey.none');
          list.appendChild(none);
        }
        result.body.passkeys.forEach(function (passkey) {
          var li = document.createElement('li');
          li.setAttribute('data-passkey-id', passkey.id);
          var title = document.createElement('strong');
          title.textContent = passkey.name;
          var detail = document.createElement('span');
          detail.textContent = passkey.lastUsedAt
            ? msg('script.passkey.addedUsed', { added: formatTime(passkey.createdAt), used: formatTime(passkey.lastUsedAt) })
            : msg('script.passkey.addedUnused', { added: formatTime(passkey.createdAt) });
          li.appendChild(title);
          li.appendChild(detail);
          li.appendChild(
            button(msg('script.passkey.rename'), function () {
              if (!li.querySelector('form')) renameForm(passkey, li);
            }),
          );
          li.appendChild(
            button(msg('script.passkey.remove'), function () {
              return call('DELETE', '/api/auth/passkeys/' + encodeURIComponent(passkey.id), reauthentication()).then(function (deleted) {
                if (!deleted.response.ok) return showMessage('error', describeManageFailure(deleted));
                showMessage('success', msg('script.passkey.removed', { name: passkey.name }));
                return load();
              }, networkFailure);
            }),
          );
          list.appendChild(li);
        });
      }, networkFailure);
    }

    if (supported) {
      form.hidden = false;
    } else {
      var unsupported = document.getElementById('passkey-unsupported');
      if (unsupported) unsupported.hidden = false;
    }

    form.addEventListener('submit', function (event) {
      event.preventDefault();
      if (form.getAttribute('aria-busy') === 'true') return;
      var submit = form.querySelector('button[type="submit"]');
      var password = form.querySelector('input[name="currentPassword"]');
      var nameInput = form.querySelector('input[name="name"]');
      var name = nameInput.value.trim();
      form.setAttribute('aria-busy', 'true');
      setBusy(submit, true);
      // An empty password field is no password: the server then says one is needed.
      call('POST', form.getAttribute('data-passkey-api'), password && password.value !== '' ? { currentPassword: password.value } : {})
        .then(function (options) {
          if (!options.response.ok) return showMessage('error', describeFailure(options));
          return lib.startRegistration({ optionsJSON: options.body }).then(
            function (credential) {
              return call('POST', '/api/auth/passkeys/register/verify', name === '' ? { response: credential } : { response: credential, name: name }).then(
                function (result) {
                  if (!result.response.ok) return showMessage('error', describeFailure(result));
                  form.reset();
                  showMessage('success', msg('script.passkey.added', { name: result.body.passkey.name }));
                  return load();
                },
              );
            },
            function (error) {
              var text = describeBrowserError(error);
              if (text !== null) showMessage('error', text);
            },
          );
        }, networkFailure)
        .finally(function () {
          form.removeAttribute('aria-busy');
          setBusy(submit, false);
        });
    });

    load();
  }

  if (page === 'login') setUpLogin();
  if (page === 'account') setUpAccount();
})();
