/**
 * @module The pages' one script (served as /assets/app.js; plain JavaScript, no build step).
 * It sends each form with fetch to the JSON endpoint named in the form's data-api, and puts what
 * happened into the page's message area in words a person understands. Everything it shows is
 * set as text (textContent), never as HTML.
 */
'use strict';

(function () {
  var page = document.body.getAttribute('data-page');
  var devMode = document.body.getAttribute('data-dev-mode') === 'true';
  var messageBox = document.getElementById('message');

  // A reset or verification link carries its token in the address. The form already holds it, so
  // it leaves the address bar and the history: not left for the next person at this computer, a
  // screen share, a bookmark or a synced history.
  if ((page === 'reset-password' || page === 'verify-email' || page === 'email-sign-in') && /[?&]token=/.test(window.location.search)) {
    window.history.replaceState(null, '', window.location.pathname);
  }

  // --- Messages: the page's catalog texts, sent by the server as a JSON data block ---
  var lang = document.documentElement.lang || 'en';
  var MESSAGES = readMessages();

  function readMessages() {
    var block = document.getElementById('page-messages');
    try {
      return block ? JSON.parse(block.textContent || '{}') : {};
    } catch {
      return {};
    }
  }

  /** The catalog text of `key` with its {{name}} slots filled; `count` also picks the plural form by the page language's rules. */
  function msg(key, vars) {
    var text = MESSAGES[key];
    if (vars && typeof vars.count === 'number') {
      var form = new Intl.PluralRules(lang).select(vars.count);
      text = MESSAGES[key + '_' + form] || MESSAGES[key + '_other'];
    }
    if (typeof text !== 'string') return key;
    return text.replace(/\{\{(\w+)\}\}/g, function (_, name) {
      return vars && name in vars ? String(vars[name]) : '';
    });
  }

  /**
   * What to show for a server's text: in English the server's own words (often more specific);
   * otherwise the catalog's text for the error code (error.<code>, sent only where translated),
   * then `fallback` (the catalog's text for the case), then the server's words.
   */
  function serverText(serverMessage, code, fallback) {
    if (lang === 'en' && typeof serverMessage === 'string' && serverMessage !== '') return serverMessage;
    if (code && MESSAGES['error.' + code]) return MESSAGES['error.' + code];
    if (fallback) return fallback;
    return serverMessage;
  }

  // The same reader for the page's other scripts (account.js, passkeys.js), which run after this
  // one (deferred scripts run in order): one copy of the messages and of how a text is chosen.
  window.gatehouseMessages = { lang: lang, texts: MESSAGES, msg: msg, serverText: serverText };

  function showMessage(kind, text) {
    if (!messageBox) return;
    messageBox.classList.remove('message--error', 'message--success');
    messageBox.classList.add(kind === 'error' ? 'message--error' : 'message--success');
    // Clearing first makes screen readers announce a repeated message again.
    messageBox.textContent = '';
    window.setTimeout(function () {
      messageBox.textContent = text;
    }, 30);
  }

  function clearMessage() {
    if (!messageBox) return;
    messageBox.classList.remove('message--error', 'message--success');
    messageBox.textContent = '';
  }

  /** "14 minutes", "45 seconds", "2 hours": the wait a 429 asks for, rounded up. */
  function formatWait(seconds) {
    if (!(seconds > 0)) return msg('script.wait.unknown');
    if (seconds < 60) return msg('script.wait.seconds', { count: seconds });
    var minutes = Math.ceil(seconds / 60);
    if (minutes < 120) return msg('script.wait.minutes', { count: minutes });
    var hours = Math.ceil(minutes / 60);
    return msg('script.wait.hours', { count: hours });
  }

  var FIELD_NAMES = { email: msg('script.field.email'), password: msg('script.field.password'), token: msg('script.field.token') };

  /** The text to show for a failed API call. */
  function describeFailure(response, body, form) {
    var code = body && typeof body.error === 'string' ? body.error : '';
    if (response.status === 429) {
      var wait = formatWait(parseInt(response.headers.get('Retry-After') || '', 10));
      if (code === 'account_locked') {
        return msg('script.error.locked', { wait: wait });
      }
      return msg('script.error.rateLimited', { wait: wait });
    }
    if (code === 'invalid_credentials') return msg('script.error.invalidCredentials');
    if (code === 'invalid_code' && form && form.id === 'email-code-form') {
      return msg('script.error.emailCode');
    }
    if (code === 'invalid_code') return msg('script.error.mfaCode');
    if (code === 'email_exists') return msg('script.error.emailExists');
    if (code === 'not_authenticated') return msg('script.error.notAuthenticated');
    // The issues' own words are English: another language shows its catalog's text for the code instead.
    var translatedValidation = lang !== 'en' && MESSAGES['error.validation_error'];
    if (code === 'validation_error' && !translatedValidation && body && Array.isArray(body.issues) && body.issues.length > 0) {
      return body.issues
        .map(function (issue) {
          var field = FIELD_NAMES[String(issue.path).split('.')[0]] || msg('script.field.other');
          return field + ' ' + issue.message + '.';
        })
        .join(' ');
    }
    if (response.status >= 500) return msg('script.error.server');
    if (body && typeof body.message === 'string' && body.message !== '') return serverText(body.message, code, '');
    return msg('script.error.generic');
  }

  function postJson(url, data) {
    return fetch(url, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(data || {}),
    }).then(function (response) {
      return response
        .json()
        .catch(function () {
          return null;
        })
        .then(function (body) {
          return { response: response, body: body };
        });
    });
  }

  /** Shows the development-mode link: a path on this page's own origin, built from the token. */
  function showDevLink(path, token, label) {
    var box = document.getElementById('dev-link');
    var anchor = document.getElementById('dev-link-anchor');
    if (!devMode || !box || !anchor || typeof token !== 'string') return;
    anchor.href = path + '?token=' + encodeURIComponent(token);
    anchor.textContent = label;
    box.hidden = false;
  }

  // --- Password rules, checked as the person types (the server checks them again) ---
  var RULE_CHECKS = {
    length: function (pw, el) {
      var n = Array.from(pw).length;
      return n >= Number(el.getAttribute('data-min')) && n <= Number(el.getAttribute('data-max'));
    },
    upper: function (pw) {
      return /\p{Lu}/u.test(pw);
    },
    lower: function (pw) {
      return /\p{Ll}/u.test(pw);
    },
    digit: function (pw) {
      return /\p{Nd}/u.test(pw);
    },
    special: function (pw) {
      return /[^\p{L}\p{N}]/u.test(pw);
    },
  };

  /** Marks each listed rule met or not; true when all are met. */
  function checkRules(password) {
    var normalized = password.normalize('NFKC');
    var allMet = true;
    document.querySelectorAll('#password-rules [data-rule]').forEach(function (el) {
      var check = RULE_CHECKS[el.getAttribute('data-rule')];
      var met = check ? check(normalized, el) : true;
      allMet = allMet && met;
      el.classList.toggle('rule--met', met);
      var state = el.querySelector('.rule-state');
      if (state) state.textContent = met ? ' ' + msg('script.rules.done') : ' ' + msg('script.rules.notYet');
    });
    return allMet;
  }

  /**
   * Refusals of a new password that no rule above can show as the person types: too common, or
   * found in a breach (the server checks its list). The server's issue texts are English and fixed
   * (credentials/common-passwords.ts, breach-check.ts); the page shows its own words beside the field.
   */
  var PASSWORD_PROBLEMS = [
    {
      pattern: /^is too common\b/,
      text: function () {
        return msg('script.check.passwordCommon');
      },
    },
    {
      pattern: /^has appeared in a data breach\b/,
      text: function () {
        return msg('script.check.passwordBreached');
      },
    },
  ];

  function showPasswordProblem(form, issues) {
    var box = form.querySelector('[data-password-problem]');
    if (!box) return;
    var found = null;
    issues.forEach(function (issue) {
      if (found || String(issue.path).split('.')[0] !== box.getAttribute('data-password-problem')) return;
      PASSWORD_PROBLEMS.forEach(function (problem) {
        if (!found && problem.pattern.test(String(issue.message))) found = problem;
      });
    });
    if (!found) return;
    box.textContent = found.text();
    box.hidden = false;
  }

  function clearPasswordProblem(input) {
    var box = input.form && input.form.querySelector('[data-password-problem]');
    if (!box) return;
    box.hidden = true;
    box.textContent = '';
  }

  document.querySelectorAll('input[data-check-rules]').forEach(function (input) {
    input.addEventListener('input', function () {
      checkRules(input.value);
      input.removeAttribute('aria-invalid');
      clearPasswordProblem(input);
    });
    checkRules(input.value);
  });

  document.querySelectorAll('input[data-show-password]').forEach(function (toggle) {
    toggle.addEventListener('change', function () {
      var target = document.getElementById(toggle.getAttribute('data-show-password'));
      if (target) target.type = toggle.checked ? 'text' : 'password';
    });
  });

  // --- Forms ---
  function fieldsOf(form) {
    var data = {};
    new FormData(form).forEach(function (value, name) {
      data[name] = String(value);
    });
    return data;
  }

  /**
   * The field a form's address is typed in: its own, or, with data-email-from, the page's one
   * email field (on /login, the sign-in link and the code send the address typed for the password).
   */
  function emailFieldOf(form) {
    var source = form.getAttribute('data-email-from');
    return source ? document.getElementById(source) : form.querySelector('input[name="email"]');
  }

  /** Copies the shared email field's address into the form's hidden one before it is read. */
  function takeSharedEmail(form) {
    var source = form.getAttribute('data-email-from') && emailFieldOf(form);
    var own = form.querySelector('input[name="email"]');
    if (source && own) own.value = source.value;
  }

  /** Checks what the browser can check; returns the problem in words, or null. */
  function checkBeforeSending(form, data) {
    var email = emailFieldOf(form);
    if (email && data.email.trim() === '') return { field: email, text: msg('script.check.emailMissing') };
    if (email && !email.checkValidity()) return { field: email, text: msg('script.check.emailInvalid') };
    var password = form.querySelector('input[name="password"]');
    if (password && data.password === '') return { field: password, text: msg('script.check.passwordMissing') };
    if (password && password.hasAttribute('data-check-rules') && !checkRules(data.password)) {
      return { field: password, text: msg('script.check.passwordRules') };
    }
    return null;
  }

  function setBusy(form, busy) {
    var button = form.querySelector('button[type="submit"]');
    if (!button) return;
    if (busy) {
      button.setAttribute('data-idle-text', button.textContent);
      button.textContent = button.getAttribute('data-busy-text') || button.textContent;
      button.disabled = true;
      form.setAttribute('aria-busy', 'true');
    } else {
      button.textContent = button.getAttribute('data-idle-text') || button.textContent;
      button.disabled = false;
      form.removeAttribute('aria-busy');
    }
  }

  /** /login's first step: the password form and the other ways in, hidden together for the code step. */
  function showFirstFactor(visible) {
    ['first-factor', 'other-ways'].forEach(function (id) {
      var element = document.getElementById(id);
      if (element) element.hidden = !visible;
    });
  }

  var onSuccess = {
    login: function (form, body) {
      if (body && body.mfaRequired) {
        // The first factor was right; the account asks for a code too (the challenge is in a cookie).
        showFirstFactor(false);
        var mfaForm = document.getElementById('mfa-form');
        mfaForm.hidden = false;
        document.getElementById('mfa-code').focus();
        return;
      }
      window.location.assign((body && body.returnTo) || form.getAttribute('data-return-to') || '/dashboard');
    },
    'email-link-form': function (form, body) {
      showMessage('success', serverText(body && body.message, '', msg('script.success.emailLinkSent')));
      showDevLink('/email-sign-in', body && body.token, msg('script.dev.signInLink'));
      // The code goes with the same address: unfold its step and wait for the code.
      var codeEmail = document.getElementById('email-code-email');
      if (codeEmail) codeEmail.value = fieldsOf(form).email;
      var codeStep = document.getElementById('email-code-step');
      if (codeStep) codeStep.open = true;
      var code = document.getElementById('email-code');
      if (code) code.focus();
    },
    'email-code-form': function (form, body) {
      onSuccess.login(form, body);
    },
    'email-sign-in': function (form, body) {
      // A 2FA account finishes on the login page's code step (the challenge is in a cookie).
      if (body && body.mfaRequired) {
        window.location.assign('/login?mfa=required');
        return;
      }
      window.location.assign((body && body.returnTo) || '/dashboard');
    },
    'mfa-form': function (form, body) {
      window.location.assign((body && body.returnTo) || form.getAttribute('data-return-to') || '/dashboard');
    },
    register: function (form, body) {
      if (!devMode) {
        window.location.assign(form.getAttribute('data-return-to') || '/dashboard');
        return;
      }
      // Development mode stops here so the verification link can be shown.
      form.hidden = true;
      showMessage('success', msg('script.success.registered'));
      showDevLink('/verify-email', body && body.verificationToken, msg('script.dev.verificationLink'));
      document.getElementById('continue').hidden = false;
    },
    'forgot-password': function (form, body) {
      showMessage('success', serverText(body && body.message, '', msg('script.success.resetSent')));
      showDevLink('/reset-password', body && body.token, msg('script.dev.resetLink'));
    },
    'reset-password': function (form) {
      form.hidden = true;
      showMessage('success', msg('script.success.passwordChanged'));
      document.getElementById('continue').hidden = false;
    },
    'verify-email': function (form) {
      form.hidden = true;
      var decline = document.getElementById('decline-form');
      if (decline) decline.hidden = true;
      showMessage('success', msg('script.success.verified'));
      document.getElementById('continue').hidden = false;
    },
    'decline-form': function () {
      document.querySelectorAll('form').forEach(function (each) {
        each.hidden = true;
      });
      showMessage('success', msg('script.success.declined'));
    },
    'resend-form': function (form, body) {
      if (body && body.alreadyVerified) {
        window.location.reload();
        return;
      }
      showMessage('success', msg('script.success.resent'));
      showDevLink('/verify-email', body && body.verificationToken, msg('script.dev.verificationLink'));
    },
    'sign-out-form': function () {
      window.location.assign('/login?signed_out=1');
    },
  };

  document.querySelectorAll('form[data-api]').forEach(function (form) {
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      if (form.getAttribute('aria-busy') === 'true') return;
      takeSharedEmail(form);
      var data = fieldsOf(form);
      var problem = checkBeforeSending(form, data);
      form.querySelectorAll('[aria-invalid]').forEach(function (el) {
        el.removeAttribute('aria-invalid');
      });
      if (problem) {
        problem.field.setAttribute('aria-invalid', 'true');
        showMessage('error', problem.text);
        problem.field.focus();
        return;
      }
      clearMessage();
      setBusy(form, true);
      var api = form.getAttribute('data-api');
      // The endpoints that take no body get none.
      var payload = api === '/api/auth/logout' || api === '/api/auth/resend-verification' ? {} : data;
      // Six digits are the app's code; anything else typed there is a recovery code.
      if (form.id === 'mfa-form') payload = /^\d{6}$/.test(data.code.trim()) ? { code: data.code.trim() } : { recoveryCode: data.code };
      postJson(api, payload)
        .then(function (result) {
          setBusy(form, false);
          if (result.response.ok) {
            var handler = onSuccess[form.id] || onSuccess[page];
            if (handler) handler(form, result.body);
            return;
          }
          if (result.response.status === 401 && form.id === 'mfa-form' && result.body && result.body.error === 'not_authenticated') {
            // The challenge expired or was used: back to the password.
            form.hidden = true;
            showFirstFactor(true);
            showMessage('error', msg('script.error.stepExpired'));
            return;
          }
          if (result.response.status === 401 && page === 'dashboard') {
            window.location.assign('/login?return_to=%2Fdashboard');
            return;
          }
          showMessage('error', describeFailure(result.response, result.body, form));
          var issues = result.body && Array.isArray(result.body.issues) ? result.body.issues : [];
          showPasswordProblem(form, issues);
          issues.forEach(function (issue) {
            var field = form.querySelector('[name="' + String(issue.path).split('.')[0] + '"]');
            if (field && field.type !== 'hidden') field.setAttribute('aria-invalid', 'true');
          });
        })
        .catch(function () {
          setBusy(form, false);
          showMessage('error', msg('script.error.network'));
        });
    });
  });
})();
